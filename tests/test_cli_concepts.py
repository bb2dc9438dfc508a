"""``mnemonite concepts``, ``mnemonite lifecycle`` and ``search --route`` on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

from typer.testing import CliRunner

from mnemonite import Episode, MemoryConfig, Scope, SyncMemory
from mnemonite.cli import app
from mnemonite.cli.search import Route
from mnemonite.concepts import EventNode
from mnemonite.search import routing

runner = CliRunner()


def _memory(path: Path) -> str:
    url = f"sqlite:///{path}"
    with SyncMemory.open(config=MemoryConfig(url=url, index_in_background=False)) as mem:
        scope = Scope(user="alice", session="s1", agent="a")
        texts = ["kubernetes deployments roll out slowly", "kubernetes deployments need health probes"]
        for i, text in enumerate(texts):
            mem.episodic.put(Episode(id=f"k{i}", content=text), user="alice", session="s1", agent="a")
        for _ in range(5):
            mem.concepts.consolidate(scope, [EventNode(text=t, record_id=f"k{i}") for i, t in enumerate(texts)])
        mem.concepts.observe(scope, EventNode(text="a message"))
        mem.lifecycle.access([mem.episodic.get("k0")])
    return url


def _run(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_concepts_show_and_version(tmp_path: Path) -> None:
    url = _memory(tmp_path / "m.db")
    shown = json.loads(_run("concepts", "show", "-u", "alice", "-a", "a", "--json", "--db", url))
    assert shown and shown[0]["category"] == "schematic" and shown[0]["frequency"] == 5 and shown[0]["records"] == 2
    assert "version 5" in _run("concepts", "show", "-u", "alice", "-a", "a", "--db", url)
    versions = json.loads(_run("concepts", "version", "-u", "alice", "-a", "a", "--json", "--db", url))
    assert [v["version"] for v in versions] == [5, 4, 3, 2, 1]
    assert "version 0" in _run("concepts", "version", "-u", "bob", "-a", "a", "--db", url)
    context = _run("concepts", "query", "how do kubernetes deployments work?", "-u", "alice", "-a", "a", "--db", url)
    assert "Knowledge graph context" in context and "[core concept]" in context


def test_lifecycle_stats_and_sweep(tmp_path: Path) -> None:
    url = _memory(tmp_path / "m.db")
    assert json.loads(_run("lifecycle", "stats", "-u", "alice", "--json", "--db", url)) == {
        "hot": 0, "warm": 1, "cold": 1,
    }  # fmt: skip
    report = json.loads(_run("lifecycle", "sweep", "--json", "--db", url))
    assert report["hot_to_warm"] == 0 and report["warm_to_cold"] == 0
    assert "hot -> warm: 0" in _run("lifecycle", "sweep", "-u", "alice", "--db", url)


def test_search_route_auto_says_which_route_and_why(tmp_path: Path) -> None:
    url = _memory(tmp_path / "m.db")
    question = "how do kubernetes deployments work?"
    routed = json.loads(_run("search", question, "-u", "alice", "-a", "a", "--route", "auto", "--json", "--db", url))
    assert routed["route"] == "graph" and routed["reason"] == "graph cue 'how'" and routed["hits"]
    result = runner.invoke(app, ["search", "what did we discuss last time?", "-u", "alice", "--route", "auto",
                                 "--db", url])  # fmt: skip
    assert result.exit_code == 0 and "route: sequential" in result.stderr
    assert runner.invoke(app, ["search", "x", "-u", "alice", "--route", "sideways", "--db", url]).exit_code == 2


def test_search_route_multihop_says_so_on_the_result(tmp_path: Path) -> None:
    url = _memory(tmp_path / "m.db")
    question = "which kubernetes deployments have we run?"
    routed = json.loads(_run("search", question, "-u", "alice", "--route", "auto", "--json", "--db", url))
    assert routed["route"] == "multihop" and "second hop from the best hit" in routed["reason"]
    assert {h["record"]["id"] for h in routed["hits"]} == {"k0", "k1"}
    result = runner.invoke(app, ["search", "deployments", "-u", "alice", "--route", "multihop", "--db", url])
    assert result.exit_code == 0 and "route: multihop (route given; second hop" in result.stderr


def test_route_choices_match_the_library() -> None:
    assert {r.value for r in Route} == {"auto", *get_args(routing.Route)}


def test_reading_commands_do_not_create_a_database(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    for args in (["concepts", "show", "-u", "u", "-a", "a"], ["lifecycle", "stats", "-u", "u"], ["lifecycle", "sweep"]):
        assert runner.invoke(app, [*args, "--db", str(missing)]).exit_code == 1
    assert not missing.exists()
