"""`mnemonite copy`: a whole memory moves between backends and reads back identically."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from mnemonite import MemoryConfig, Scope, SyncMemory
from mnemonite.cli import app
from mnemonite.demo import AGENT, USER, run_demo

runner = CliRunner()


def snapshot(url: str) -> dict[str, object]:
    """What a user reads back: episodes, facts with their history, the graph, search, the decision log."""
    with SyncMemory.open(url, config=MemoryConfig(track_access=False)) as mem:  # reading changes nothing
        facts = mem.semantic.facts(Scope(user=USER, agent=AGENT))
        home = mem.semantic.facts(Scope(user=USER, agent=AGENT), predicate="lives in")[0]
        people = mem.graph.entities(Scope(user=USER, agent=AGENT))[0]
        return {
            "health": (mem.health().fragment_count, mem.health().fact_count, mem.health().rule_count),
            "recent": [e.model_dump() for e in mem.episodic.recent(USER, limit=100)],
            "facts": [f.model_dump() for f in facts],
            "history": [f.model_dump() for f in mem.semantic.history(home.id)],
            "entities": [e.model_dump() for e in people],
            "edges": [
                e.model_dump() for entity in people for e in mem.graph.neighbors(entity.id, direction="both", depth=2)
            ],
            "search": [(h.record.id, h.tier) for h in mem.search(Scope(user=USER), "where does Sam live", k=5)],
            "conflicts": [d.model_dump() for d in mem.semantic.conflicts(Scope(user=USER, agent=AGENT))],
            "pending": mem.index(),  # nothing left to embed: the vectors came along
        }


def test_copy_to_postgres_and_back(tmp_path: Path, postgres_url: str) -> None:
    source = f"sqlite:///{tmp_path / 'demo.db'}"
    run_demo(source, Console(file=io.StringIO()))
    with SyncMemory.open(source) as mem:  # a decision log and a purge too
        mem.semantic.remember(Scope(user=USER, agent=AGENT), "My locker code is 4711")
        mem.semantic.purge(mem.semantic.remember(Scope(user=USER, agent=AGENT), "PIN 1234").id, reason="secret")
    before = snapshot(source)

    result = runner.invoke(app, ["copy", source, postgres_url])
    assert result.exit_code == 0, result.output
    assert "every table's count matches" in result.output and "MISMATCH" not in result.output
    assert snapshot(postgres_url) == before

    back = f"sqlite:///{tmp_path / 'back.db'}"
    assert runner.invoke(app, ["copy", postgres_url, back]).exit_code == 0
    assert snapshot(back) == before
    for url in (postgres_url, back):  # new rows are numbered after the copied ones, and found
        with SyncMemory.open(url) as mem:
            fact = mem.semantic.remember(Scope(user=USER, agent=AGENT), "Sam's bike is green")
            assert [h.record.id for h in mem.semantic.search(Scope(user=USER), "bike colour")][:1] == [fact.id]
            assert mem.health().active_fact_count == len(before["facts"]) + 1  # type: ignore[arg-type]


def test_copy_refuses_a_destination_that_holds_memories(tmp_path: Path) -> None:
    first, second = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    for url, text in ((first, "I live in Oslo"), (second, "I live in Rome")):
        with SyncMemory.open(url) as mem:
            mem.semantic.remember(Scope(user="u", agent="a"), text)
    result = runner.invoke(app, ["copy", first, second])
    assert result.exit_code == 1 and "not empty" in result.stderr
    with SyncMemory.open(second) as mem:
        held = mem.semantic.facts(Scope(user="u", agent="a"))
        assert [f.text for f in held] == ["I live in Rome"]  # nothing was written


def test_demo_and_commands_take_a_postgres_url(postgres_url: str) -> None:
    for _ in range(2):  # --fresh starts the scratch database over
        result = runner.invoke(app, ["demo", "--db", postgres_url, "--fresh"])
        assert result.exit_code == 0, result.output
        assert "history of 'lives in'" in result.output
    result = runner.invoke(app, ["search", "where does Sam live", "-u", USER, "--db", postgres_url])
    assert result.exit_code == 0 and "Porto" in result.output, result.output
