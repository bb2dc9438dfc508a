"""Backups and restores on both backends: consistent while another process writes, verified by content hashes."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ep
from mnemonite import (
    ConsolidationRule,
    InvalidInputError,
    Memory,
    MemoryConfig,
    NotADatabaseError,
    NotFoundError,
    Scope,
    SyncMemory,
)
from mnemonite.backup import content_hashes, restore_memory
from mnemonite.cli import app
from mnemonite.transfer import export_memory

ALEX = Scope(user="alex", agent="a")
BATCH = 10
WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from mnemonite import Episode, Memory, MemoryConfig

    async def main(url: str) -> None:
        mem = await Memory.open(url, config=MemoryConfig(embedder="none"))
        for batch in range(100_000):
            episodes = [Episode(id=f"b{batch}-{i}", content=f"batch {batch} line {i}") for i in range(BATCH)]
            await mem.episodic.put_many(episodes, user="w", session="s", agent="a")
            print(batch, flush=True)

    BATCH = int(sys.argv[2])
    asyncio.run(main(sys.argv[1]))
    """
)


async def fill(url: str) -> None:
    """A memory with history: episodes, a consolidated fact, a superseded and a forgotten one, a graph, vectors."""
    async with await Memory.open(config=MemoryConfig(url=url)) as mem:
        meta = {"subject": "alex", "predicate": "lives in", "object": "Berlin"}
        await mem.episodic.put(ep("e1", "I live in Berlin", **meta), user="alex", session="s", agent="a")
        await mem.consolidate(ConsolidationRule(id="nightly", cadence={"every": 1}))
        await mem.semantic.remember(ALEX, "I moved to Munich last month")
        tea = await mem.semantic.remember(ALEX, "I prefer green tea")
        await mem.semantic.forget(tea.id)
        alex = await mem.graph.create_entity(ALEX, name="Alex", entity_type="person")
        acme = await mem.graph.create_entity(ALEX, name="Acme", entity_type="company")
        await mem.graph.relate(ALEX, source=alex.id, target=acme.id, relation="WORKS_AT")
        await mem.index()


async def facts_of(url: str) -> list[tuple[str, str]]:
    async with await Memory.open(url, config=MemoryConfig(embedder="none")) as mem:
        return [(f.text, f.status) for f in await mem.semantic.facts(ALEX)]


async def test_backup_and_restore_keep_every_table(memory_url: str, tmp_path: Path, postgres_url: str) -> None:
    await fill(memory_url)
    async with await Memory.open(memory_url) as mem:
        report = await mem.backup(tmp_path / "memory.backup")
    assert report.format == ("sqlite" if memory_url.startswith("sqlite") else "export")
    assert report.hashes == await content_hashes(memory_url)
    # edges: the one related by hand, and where Alex lives, learned from "I moved to Munich"
    assert report.counts["facts"] == 3 and report.counts["edges"] == 2 and report.counts["vectors"] >= 4
    other = postgres_url if memory_url.startswith("sqlite") else f"sqlite:///{tmp_path / 'restored.db'}"
    for target in (f"sqlite:///{tmp_path / 'same.db'}", other):
        restored = await restore_memory(tmp_path / "memory.backup", target)
        assert (restored.counts, restored.hashes) == (report.counts, report.hashes)
        assert await content_hashes(target) == report.hashes
        assert await facts_of(target) == await facts_of(memory_url)


async def test_a_sqlite_backup_is_one_checked_database_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    await fill(url)
    async with await Memory.open(url) as mem:
        await mem.backup(tmp_path / "copy.db")
    assert (tmp_path / "copy.db").read_bytes().startswith(b"SQLite format 3\x00")
    assert not (tmp_path / "copy.db-wal").exists() and ".copy.db.partial" not in os.listdir(tmp_path)
    async with await Memory.open(f"sqlite:///{tmp_path / 'copy.db'}", create=False) as copy:
        assert (await copy.health(deep=True)).ok
        assert [f.text for f in await copy.semantic.facts(ALEX)] == ["I moved to Munich last month"]


async def test_a_backup_never_replaces_the_memory_itself_or_a_folder(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    await fill(url)
    before = await content_hashes(url)
    async with await Memory.open(url, config=MemoryConfig(embedder="none")) as mem:
        with pytest.raises(InvalidInputError, match="own database file"):
            await mem.backup(tmp_path / "." / "memory.db")
        with pytest.raises(InvalidInputError, match="is a folder"):
            await mem.backup(tmp_path)
        with pytest.raises(NotFoundError, match="no folder"):
            await mem.backup(tmp_path / "missing" / "copy.db")
    assert await content_hashes(url) == before
    assert sorted(os.listdir(tmp_path)) == ["memory.db"]


async def test_restore_refuses_a_memory_that_is_not_empty(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    await fill(url)
    async with await Memory.open(url) as mem:
        await mem.backup(tmp_path / "copy.db")
        await mem.episodic.put(ep("later", "one more thing"), user="alex", session="s", agent="a")
    before = await content_hashes(url)
    with pytest.raises(InvalidInputError, match="not empty"):
        await restore_memory(tmp_path / "copy.db", url)
    assert await content_hashes(url) == before


async def test_restore_refuses_a_damaged_or_missing_backup_and_creates_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    await fill(url)
    await export_memory(url, tmp_path / "export.jsonl")
    lines = (tmp_path / "export.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "cut.jsonl").write_text("".join(lines[:-3]))
    (tmp_path / "junk.db").write_bytes(b"SQLite format 3\x00" + b"\x07" * 4096)
    target = tmp_path / "target.db"
    with pytest.raises(InvalidInputError, match="cut short"):
        await restore_memory(tmp_path / "cut.jsonl", f"sqlite:///{target}")
    with pytest.raises(NotADatabaseError):
        await restore_memory(tmp_path / "junk.db", f"sqlite:///{target}")
    with pytest.raises(NotFoundError):
        await restore_memory(tmp_path / "nothing.db", f"sqlite:///{target}")
    assert not target.exists()


async def test_restore_leaves_the_backup_file_as_it_was(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    await fill(url)
    async with await Memory.open(url) as mem:
        await mem.backup(tmp_path / "copy.db")
    before = (tmp_path / "copy.db").read_bytes()
    await restore_memory(tmp_path / "copy.db", f"sqlite:///{tmp_path / 'restored.db'}")
    assert (tmp_path / "copy.db").read_bytes() == before and not (tmp_path / "copy.db-wal").exists()


async def test_a_backup_taken_while_another_process_writes_holds_whole_batches(memory_url: str, tmp_path: Path) -> None:
    async with await Memory.open(memory_url, config=MemoryConfig(embedder="none")):
        pass  # the schema exists before the writer and the backup race for it
    writer = await asyncio.create_subprocess_exec(
        sys.executable, "-c", WRITER, memory_url, str(BATCH), stdout=asyncio.subprocess.PIPE
    )
    try:
        assert writer.stdout is not None
        acknowledged = [int(await writer.stdout.readline()) for _ in range(5)]
        async with await Memory.open(memory_url, config=MemoryConfig(embedder="none")) as mem:
            report = await mem.backup(tmp_path / "live.backup")
        after = int(await writer.stdout.readline())
    finally:
        writer.kill()
        await writer.wait()
    target = f"sqlite:///{tmp_path / 'restored.db'}"
    restored = await restore_memory(tmp_path / "live.backup", target)
    assert restored.hashes == report.hashes
    async with await Memory.open(target, config=MemoryConfig(embedder="none"), create=False) as copy:
        ids = {e.id for e in await copy.episodic.recent("w", limit=1_000_000)}
        assert (await copy.health(deep=True)).ok
    batches = {int(i.split("-")[0][1:]) for i in ids}
    assert len(ids) == len(batches) * BATCH  # no partial batch
    assert batches == set(range(len(batches)))  # a prefix: nothing committed before the snapshot is missing
    assert set(acknowledged) <= batches and after > max(acknowledged)


def test_backup_and_restore_commands(tmp_path: Path) -> None:
    runner = CliRunner()
    source, target, file = tmp_path / "memory.db", tmp_path / "restored.db", tmp_path / "memory.backup"
    asyncio.run(fill(f"sqlite:///{source}"))
    made = runner.invoke(app, ["--db", str(source), "backup", str(file)])
    assert made.exit_code == 0, made.output
    assert "backed up" in made.output and file.exists()
    done = runner.invoke(app, ["--db", str(target), "restore", str(file), "--json"])
    assert done.exit_code == 0, done.output
    assert '"format":"sqlite"' in done.output
    again = runner.invoke(app, ["--db", str(target), "restore", str(file)])
    assert again.exit_code == 1 and "error: the destination is not empty" in again.output


def test_sync_memory_backs_up(tmp_path: Path) -> None:
    with SyncMemory.open(f"sqlite:///{tmp_path / 'memory.db'}", config=MemoryConfig(embedder="none")) as mem:
        mem.episodic.put(ep("e1", "hello"), user="u", session="s", agent="a")
        report = mem.backup(tmp_path / "copy.db")
    assert report.counts["episodes"] == 1 and report.path == tmp_path / "copy.db"
