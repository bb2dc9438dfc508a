"""The command line over a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import plant_replaced_turn, plant_turn_and_its_fact
from mnemonite.cli import app

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> list[str]:
    return ["--db", f"sqlite:///{tmp_path / 'cli.db'}"]


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_record_recent_consolidate_facts_health(db: list[str]) -> None:
    invoke(
        "record",
        "I live in Paris",
        "-u",
        "alice",
        "-s",
        "S1",
        "-a",
        "rag",
        "--id",
        "e1",
        "--meta",
        "subject=alice",
        "--meta",
        "predicate=lives in",
        *db,
    )
    invoke(
        "record",
        "I moved to Rome",
        "-u",
        "alice",
        "-s",
        "S2",
        "-a",
        "rag",
        "--id",
        "e2",
        "--meta",
        "subject=alice",
        "--meta",
        "predicate=lives in",
        "--timestamp",
        "2030-01-01T00:00:00Z",
        *db,
    )
    invoke("record", "thanks", "-u", "alice", "-s", "S2", "-a", "rag", "--meta", "intent=noop", *db)
    lines = invoke("recent", "-u", "alice", "--nl", *db).strip().splitlines()
    assert [json.loads(line)["id"] for line in lines][:1] == ["e2"] and len(lines) == 3
    invoke("rules", "add", "nightly", "--filter", "metadata.intent != 'noop'", *db)
    assert "nightly" in invoke("rules", "list", *db)
    out = invoke("consolidate", "nightly", *db)
    assert "add 1, update 1" in out
    facts = json.loads(invoke("facts", "-u", "alice", "--json", *db))
    assert [f["text"] for f in facts] == ["I moved to Rome"]
    chain = json.loads(invoke("history", facts[0]["id"][:10], "--json", *db))
    assert [fact["status"] for fact in chain] == ["superseded", "active"]
    assert len(json.loads(invoke("deltas", "--json", *db))) == 2
    health = json.loads(invoke("health", "--json", "--deep", *db))
    assert health["integrity"] == "ok"
    assert (health["fragment_count"], health["fact_count"], health["rule_count"]) == (3, 2, 1)
    assert "no rule is due" in invoke("consolidate", *db)
    invoke("rules", "remove", "nightly", *db)


def test_errors_are_reported_not_raised(db: list[str]) -> None:
    result = runner.invoke(app, ["rules", "add", "bad", "--cron", "not a cron", *db])
    assert result.exit_code == 1 and "cron" in result.stderr
    result = runner.invoke(app, ["rules", "add", "evil", "--filter", "1=1; DROP TABLE episodes", *db])
    assert result.exit_code == 1 and "';'" in result.stderr
    result = runner.invoke(app, ["record", "x", "-u", "a", "-s", "s", "-a", "g", "--timestamp", "2024-01-01", *db])
    assert result.exit_code == 2 and "timezone" in result.stderr
    suggested = result.stderr.split("e.g. ")[1].split()[0]  # the hint is a time the option takes
    stamped = runner.invoke(app, ["record", "x", "-u", "a", "-s", "s", "-a", "g", "--timestamp", suggested, *db])
    assert stamped.exit_code == 0, stamped.stderr
    result = runner.invoke(app, ["record", "x", "-u", " ", "-s", "s", "-a", "g", *db])
    assert result.exit_code == 1 and result.stderr.startswith("error: ") and "user" in result.stderr
    result = runner.invoke(app, ["consolidate", "nope", *db])
    assert result.exit_code == 1 and result.stderr.startswith("error: no rule")


def test_migrate_from_a_plan_file(db: list[str], tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 2, "ops": [{"op": "add_column", "table": "facts", "column": "note"}]}))
    invoke("migrate", str(plan), *db)
    plan.write_text(json.dumps({"version": 3, "ops": [{"op": "drop_column", "table": "facts", "column": "text"}]}))
    result = runner.invoke(app, ["migrate", str(plan), *db])
    assert result.exit_code == 1 and "drop_column" in result.stderr


def test_demo_runs_on_a_real_file(tmp_path: Path) -> None:
    path = tmp_path / "demo.db"
    out = invoke("demo", "--db", str(path))
    assert "superseded" in out and "Vila Nova de Gaia" in out and "Lisbon" in out
    assert "Sam LIVES_IN Vila Nova de Gaia" in out and "Sam cooks risotto" in out
    assert path.exists()
    refused = runner.invoke(app, ["demo", "--db", str(path)])
    assert refused.exit_code == 2 and "--fresh" in refused.stderr
    result = runner.invoke(app, ["demo", "--db", str(path), "--fresh", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout) == {"db": f"sqlite:///{path}"}
    assert "superseded" in result.stderr


def test_demo_fresh_never_deletes_a_memory_it_did_not_make(tmp_path: Path) -> None:
    real = tmp_path / "real.db"
    invoke("--db", str(real), "record", "Lunch with Bob", "-u", "alice", "-s", "s", "-a", "x")
    refused = runner.invoke(app, ["demo", "--db", str(real), "--fresh"])
    assert refused.exit_code == 2 and "other users' records (alice)" in refused.stderr
    assert "Lunch with Bob" in invoke("--db", str(real), "recent", "-u", "alice")
    other = tmp_path / "notes.db"
    other.write_text("not a database")
    refused = runner.invoke(app, ["demo", "--db", str(other), "--fresh"])
    assert refused.exit_code == 2 and "not a mnemonite memory" in refused.stderr
    assert other.read_text() == "not a database"


def test_demo_takes_the_memory_given_before_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["--db", "given.db", "demo", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout) == {"db": "sqlite:///given.db"}
    assert (tmp_path / "given.db").exists() and not (tmp_path / "mnemonite-demo.db").exists()


def test_search_index_and_migrate_embedder(db: list[str]) -> None:
    invoke("record", "I adore hiking in the Dolomites", "-u", "al", "-s", "s", "-a", "x", "--id", "hike", *db)
    invoke("record", "Tax forms are due on Friday", "-u", "al", "-s", "s", "-a", "x", "--id", "tax", *db)
    hits = json.loads(invoke("search", "mountain holidays", "-u", "al", "--fresh", "--json", *db))
    assert hits[0]["record"]["id"] == "hike" and hits[0]["vector_rank"] == 1
    assert json.loads(invoke("index", "--json", *db)) == {"embedded": 0}
    assert "complete" in invoke("migrate-embedder", *db)
    result = runner.invoke(app, ["search", " ", "-u", "al", *db])
    assert result.exit_code != 0 and "non-empty" in result.output


def test_remember_conflicts_forget_purge(db: list[str]) -> None:
    assert "admit" in invoke("remember", "I live in Berlin", "-u", "alex", "-a", "a", *db)
    moved = invoke("remember", "I just moved to Lisbon", "-u", "alex", "-a", "a", *db)
    assert "supersede" in moved and "supersedes" in moved
    log = [json.loads(line) for line in invoke("conflicts", "-u", "alex", "--nl", *db).splitlines()]
    assert [d["kind"] for d in log] == ["admit", "supersede"]
    new_id = log[1]["fact_id"]
    assert "forgot" in invoke("forget", new_id[:8], *db)
    assert "purged 2 fact version(s)" in invoke("purge", new_id[:8], "--reason", "erasure request", *db)
    assert "Lisbon" not in invoke("conflicts", "-u", "alex", *db)


def test_graph_entities_relations_neighbors_context(db: list[str]) -> None:
    who = ("-u", "alex", "-a", "a", *db)
    assert "Alice (person)" in invoke("graph", "add", "Alice", "--type", "person", "--prop", "role=engineer", *who)
    invoke("graph", "add", "Acme", "--type", "company", *who)
    invoke("graph", "add", "Lyon", "--type", "city", *who)
    assert "Alice WORKS_AT Acme" in invoke("graph", "relate", "alice", "WORKS_AT", "Acme", *who)
    invoke("graph", "relate", "Acme", "LOCATED_IN", "Lyon", *who)
    walk = invoke("graph", "neighbors", "Alice", "--depth", "2", "--csv", *who).splitlines()
    assert [line.split(",")[-1] for line in walk] == ["depth", "0", "1"]
    assert "Acme" in invoke("graph", "neighbors", "Alice", "--depth", "2", *who)
    assert json.loads(invoke("graph", "neighbors", "Alice", "--direction", "in", "--json", *who)) == []
    context = invoke("graph", "context", "Alice", "--max-tokens", "500", *who)
    assert "role: engineer" in context and "Alice WORKS_AT Acme" in context
    assert json.loads(invoke("graph", "stats", "--json", *who))["edges"] == 2
    failed = runner.invoke(app, ["graph", "add", "ALICE", "--type", "person", *who])
    assert failed.exit_code == 1 and failed.stderr.startswith("error: ")


def test_search_shows_facts_beside_their_turns_when_asked(db: list[str]) -> None:
    plant_turn_and_its_fact(db[1], "al", "x")
    question = ("search", "Where did al move? Munich", "-u", "al", "--json", *db)
    stood = json.loads(invoke(*question))
    both = json.loads(invoke(*question, "--facts-beside"))
    assert sorted(hit["tier"] for hit in both) == ["episodic", "semantic"] and len(stood) == 1


def test_search_puts_a_replaced_turn_below_what_replaced_it_unless_asked(db: list[str]) -> None:
    plant_replaced_turn(db[1], "al", "x")
    question = ("search", "vegetarian dinner", "-u", "al", "--tier", "episodic", *db)
    # stdout alone: the first embedding of a session may note on stderr that the int8 copy is being made
    current, scored = (
        json.loads(runner.invoke(app, [*question, *more, "--json"]).stdout) for more in ((), ("--as-scored",))
    )
    assert [(h["record"]["id"], h["superseded"]) for h in scored] == [("old", True), ("new", False)]
    assert [(h["record"]["id"], h["superseded"]) for h in current] == [("new", False), ("old", True)]
    assert "(superseded)" in invoke(*question)
    refused = runner.invoke(app, [*question, "--as-scored", "--route", "flat"])
    assert refused.exit_code == 2 and "--route" in refused.stderr
