"""Export and import of a whole memory as JSON lines: lossless across SQLite and PostgreSQL, refused when damaged."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import ep
from mnemonite import ConsolidationRule, InvalidInputError, Memory, MemoryConfig, NotFoundError, Scope
from mnemonite.transfer import export_memory, import_memory

ALEX = Scope(user="alex", agent="a")


async def fill(url: str) -> datetime:
    """A memory with history: a superseded fact, a forgotten one, decisions, a graph, a rule, vectors."""
    async with await Memory.open(config=MemoryConfig(url=url)) as mem:
        meta = {"subject": "alex", "predicate": "lives in", "object": "Berlin"}
        await mem.episodic.put(ep("e1", "I live in Berlin", **meta), user="alex", session="s", agent="a")
        await mem.consolidate(ConsolidationRule(id="nightly", cadence={"every": 1}))
        between = datetime.now(UTC)
        await mem.semantic.remember(ALEX, "I moved to Munich last month")
        tea = await mem.semantic.remember(ALEX, "I prefer green tea")
        await mem.semantic.forget(tea.id)
        alex = await mem.graph.create_entity(ALEX, name="Alex", entity_type="person")
        acme = await mem.graph.create_entity(ALEX, name="Acme", entity_type="company")
        await mem.graph.relate(ALEX, source=alex.id, target=acme.id, relation="WORKS_AT")
        await mem.index()
    return between


async def answers(url: str, moment: datetime) -> tuple[list[str], list[str], list[str]]:
    async with await Memory.open(config=MemoryConfig(url=url)) as mem:
        now = [f.text for f in await mem.semantic.facts(ALEX)]
        then = [f.text for f in await mem.semantic.facts(ALEX, as_of=moment)]
        hits = [h.record.id for h in await mem.search(Scope(user="alex"), "where does alex live", k=5)]
    return now, then, hits


async def test_sqlite_to_postgres_and_back_is_lossless(tmp_path: Path, postgres_url: str) -> None:
    first = f"sqlite:///{tmp_path / 'a.db'}"
    moment = await fill(first)
    one = await export_memory(first, tmp_path / "one.jsonl")
    # edges: the one related by hand, and where Alex lives, learned from "I moved to Munich"
    assert one.counts["facts"] == 3 and one.counts["edges"] == 2 and one.counts["vectors"] >= 4
    await import_memory(tmp_path / "one.jsonl", postgres_url)
    two = await export_memory(postgres_url, tmp_path / "two.jsonl")
    assert (two.counts, two.sha256) == (one.counts, one.sha256)
    last = f"sqlite:///{tmp_path / 'b.db'}"
    three = await import_memory(tmp_path / "two.jsonl", last)
    assert three.sha256 == one.sha256
    expected = await answers(first, moment)
    assert expected[0] != expected[1]  # the replay differs from now: history came along
    assert await answers(postgres_url, moment) == expected == await answers(last, moment)


def rewrite(path: Path, edit: object) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(edit(lines)))  # type: ignore[operator]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda lines: lines[:-1], "cut short"),
        (lambda lines: lines[:-3] + lines[-2:], "counts and hash"),
        (lambda lines: [lines[0], lines[1].replace("Berlin", "Paris"), *lines[2:]], "counts and hash"),
        (lambda lines: [lines[0].replace('"version":1', '"version":9'), *lines[1:]], "version"),
        (lambda lines: ["not json\n", *lines], "not JSON"),
        (lambda lines: [], "empty"),
    ],
)
async def test_a_damaged_file_is_refused_and_nothing_is_written(tmp_path: Path, damage: object, message: str) -> None:
    source = f"sqlite:///{tmp_path / 'a.db'}"
    await fill(source)
    await export_memory(source, tmp_path / "x.jsonl")
    rewrite(tmp_path / "x.jsonl", damage)
    with pytest.raises(InvalidInputError, match=message):
        await import_memory(tmp_path / "x.jsonl", f"sqlite:///{tmp_path / 'new.db'}")
    assert not (tmp_path / "new.db").exists()


async def test_missing_files_and_full_destinations_are_refused(tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'a.db'}"
    await fill(source)
    with pytest.raises(NotFoundError):
        await import_memory(tmp_path / "nothing.jsonl", f"sqlite:///{tmp_path / 'new.db'}")
    report = await export_memory(source, tmp_path / "x.jsonl")
    with pytest.raises(InvalidInputError, match="not empty"):
        await import_memory(tmp_path / "x.jsonl", source)
    again = await export_memory(source, tmp_path / "y.jsonl")
    assert again.sha256 == report.sha256  # the refused import changed nothing
    header = json.loads((tmp_path / "x.jsonl").read_text().splitlines()[0])
    assert header["format"] == "mnemonite-export" and header["version"] == 1
