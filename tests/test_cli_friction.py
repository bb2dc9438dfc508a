"""What surprised a new user of the command line: paths, missing files, ids, brackets, formats, errors."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mnemonite.cli import app

runner = CliRunner()
SRC = Path(__file__).resolve().parents[1] / "src"
WHO = ("-u", "alice", "-s", "s1", "-a", "bot")


def ok(*args: str, stdin: str | None = None) -> str:
    result = runner.invoke(app, list(args), input=stdin)
    assert result.exit_code == 0, result.output
    return result.stdout


def fails(*args: str, code: int = 1) -> str:
    """The one-line stderr of a command that must fail with ``code``."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    return result.stderr


def column(table: str, index: int) -> str:
    """The cells of one column of a rich table, wrapped lines joined, spaces dropped."""
    rows = [line.split("│") for line in table.splitlines() if line.startswith("│")]
    return "".join(row[index] for row in rows).replace(" ", "")


@pytest.fixture
def in_tmp(tmp_path: Path) -> Iterator[Path]:
    before = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


@pytest.fixture(autouse=True)
def no_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MNEMONITE_URL", raising=False)


def test_version() -> None:
    from importlib.metadata import version

    assert ok("--version").strip() == f"mnemonite {version('mnemonite')}"


@pytest.mark.parametrize("where", ["m.db", "./m.db", "absolute", "sqlite:///m.db"])
def test_db_takes_a_bare_path_or_a_url_before_or_after_the_command(in_tmp: Path, where: str) -> None:
    db = str(in_tmp / "m.db") if where == "absolute" else where
    ok("--db", db, "record", "hello", *WHO)
    assert (in_tmp / "m.db").is_file()
    assert json.loads(ok("recent", "-u", "alice", "--json", "--db", db))[0]["content"] == "hello"
    assert json.loads(ok("--db", db, "recent", "-u", "alice", "--json"))[0]["content"] == "hello"


def test_the_command_db_wins_over_the_global_one_and_the_environment(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMONITE_URL", "env.db")
    ok("record", "from env", *WHO)
    ok("--db", "global.db", "record", "global", *WHO)
    ok("--db", "global.db", "record", "local", *WHO, "--db", "local.db")
    assert {p.name for p in in_tmp.glob("*.db")} == {"env.db", "global.db", "local.db"}
    assert json.loads(ok("recent", "-u", "alice", "--json", "--db", "local.db"))[0]["content"] == "local"


def test_default_is_mnemonite_db_in_the_current_folder(in_tmp: Path) -> None:
    ok("record", "hello", *WHO)
    assert (in_tmp / "mnemonite.db").is_file()


@pytest.mark.parametrize(
    "command",
    [
        ("health",),
        ("recent", "-u", "alice"),
        ("facts", "-u", "alice"),
        ("search", "x", "-u", "alice"),
        ("history", "abc"),
        ("deltas",),
        ("conflicts", "-u", "alice"),
        ("rules", "list"),
        ("index",),
        ("graph", "entities", "-u", "alice", "-a", "bot"),
        ("graph", "stats", "-u", "alice", "-a", "bot"),
    ],
)
def test_reading_a_missing_database_is_an_error_and_creates_nothing(in_tmp: Path, command: tuple[str, ...]) -> None:
    message = fails(*command, "--db", "no/such/folder/typo.db")
    assert message.startswith("error: no database at no/such/folder/typo.db")
    assert message.count("\n") == 1
    assert list(in_tmp.iterdir()) == []


@pytest.mark.parametrize("command", [("recent", "-u", "alice"), ("record", "x", "-u", "a", "-s", "s", "-a", "g")])
def test_a_folder_given_as_the_database_is_named_so_by_reads_and_writes(in_tmp: Path, command: tuple[str, ...]) -> None:
    (in_tmp / "adir").mkdir()
    message = fails(*command, "--db", "adir")
    assert message.startswith("error: adir is a folder, not a database file") and message.count("\n") == 1
    assert list((in_tmp / "adir").iterdir()) == []


def test_copy_from_a_missing_source_creates_nothing(in_tmp: Path) -> None:
    message = fails("copy", "sqlite:///typo.db", "sqlite:///out.db")
    assert message.startswith("error: no database at typo.db") and message.count("\n") == 1
    assert list(in_tmp.iterdir()) == []


def test_copy_takes_bare_paths(in_tmp: Path) -> None:
    ok("record", "hello", *WHO, "--db", "a.db")
    assert json.loads(ok("copy", "a.db", "b.db", "--json"))["ok"] is True
    assert json.loads(ok("recent", "-u", "alice", "--json", "--db", "b.db"))[0]["content"] == "hello"


def test_a_file_that_is_not_a_database_is_one_line(in_tmp: Path) -> None:
    (in_tmp / "notes.txt").write_text("shopping list: eggs, milk\n" * 100)
    message = fails("health", "--db", "notes.txt")
    assert message.startswith("error: notes.txt is not a SQLite database") and message.count("\n") == 1
    assert (in_tmp / "notes.txt").read_text() == "shopping list: eggs, milk\n" * 100


def test_debug_shows_the_traceback(in_tmp: Path) -> None:
    (in_tmp / "notes.txt").write_text("not a database\n" * 100)
    result = runner.invoke(app, ["--debug", "health", "--db", "notes.txt"])
    assert result.exit_code == 1
    assert type(result.exception).__name__ == "NotADatabaseError"


def test_a_locked_database_is_one_line_naming_the_busy_timeout(in_tmp: Path) -> None:
    ok("record", "hello", *WHO, "--db", "m.db")
    holder = sqlite3.connect(in_tmp / "m.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        message = fails("--no-embed", "record", "again", *WHO, "--db", "m.db")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert message.startswith("error: SQLite: database is locked") and "busy timeout (10 s)" in message
    assert message.count("\n") == 1


def test_usage_errors_exit_2(in_tmp: Path) -> None:
    missing = runner.invoke(app, ["recent"])
    assert missing.exit_code == 2
    assert missing.stderr == "error: Missing option '--user' / '-u'. (see: root recent --help)\n"
    assert runner.invoke(app, ["graph", "neighbors", "x", "-u", "u", "-a", "a", "--direction", "up"]).exit_code == 2
    assert runner.invoke(app, ["remember", "x", "-u", "u", "-a", "a", "--type", "rumour"]).exit_code == 2
    assert runner.invoke(app, ["search", "x", "-u", "u", "--tier", "cold"]).exit_code == 2
    assert list(in_tmp.iterdir()) == []


def test_square_brackets_are_shown_as_written(in_tmp: Path) -> None:
    text = "pip install 'mnemonite[postgres]' and [bold]not bold[/bold]"
    ok("record", text, *WHO, "--db", "m.db")
    assert column(ok("recent", "-u", "alice", "--db", "m.db"), -2) == text.replace(" ", "")
    ok("remember", "I use mnemonite[postgres] at work", "-u", "alice", "-a", "bot", "--db", "m.db")
    assert column(ok("facts", "-u", "alice", "--db", "m.db"), 2) == "Iusemnemonite[postgres]atwork"
    message = fails("forget", "[red]nope[/red]", "--db", "m.db")
    assert "[red]nope[/red]" in message


def test_full_ids_are_shown_and_prefixes_accepted(in_tmp: Path) -> None:
    db = ("--db", "m.db")
    ok("remember", "I live in Berlin", "-u", "alice", "-a", "bot", *db)
    fact = json.loads(ok("facts", "-u", "alice", "--json", *db))[0]["id"]
    assert len(fact) == 32 and fact in ok("facts", "-u", "alice", *db)
    new = ok("supersede", fact[:6], "I live in Lisbon", *db)
    assert f"supersedes {fact}" in new
    chain = json.loads(ok("history", fact[:6], "--json", *db))
    assert [f["text"] for f in chain] == ["I live in Berlin", "I live in Lisbon"]
    assert fails("history", "zzzz", *db).startswith("error: no fact with an id starting with 'zzzz'")


def test_an_ambiguous_prefix_lists_candidates(in_tmp: Path) -> None:
    db = ("--db", "m.db")
    ok("rules", "add", "nightly-a", *db)
    ok("rules", "add", "nightly-b", *db)
    message = fails("rules", "remove", "nightly", *db)
    assert "matches several: nightly-a, nightly-b" in message
    ok("rules", "remove", "nightly-b", *db)
    assert [s["rule"]["id"] for s in json.loads(ok("rules", "list", "--json", *db))] == ["nightly-a"]


def test_record_and_remember_read_standard_input(in_tmp: Path) -> None:
    db = ("--db", "m.db")
    ok("record", "-", *WHO, *db, stdin="a long message\nover two lines\n")
    assert json.loads(ok("recent", "-u", "alice", "--json", *db))[0]["content"] == "a long message\nover two lines"
    ok("remember", "-", "-u", "alice", "-a", "bot", *db, stdin="I live in Porto\n")
    assert json.loads(ok("facts", "-u", "alice", "--json", *db))[0]["text"] == "I live in Porto"
    assert runner.invoke(app, ["record", "-", *WHO, *db], input="").exit_code == 2


def test_json_nl_and_csv_parse_back(in_tmp: Path) -> None:
    db = ("--db", "m.db")
    for text in ("one, with a comma", 'two "quoted"'):
        ok("record", text, *WHO, *db)
    as_json = json.loads(ok("recent", "-u", "alice", "--json", *db))
    as_nl = [json.loads(line) for line in ok("recent", "-u", "alice", "--nl", *db).splitlines()]
    as_csv = list(csv.DictReader(io.StringIO(ok("recent", "-u", "alice", "--csv", *db))))
    assert [(r["id"], r["content"]) for r in as_json] == [(r["id"], r["content"]) for r in as_nl]
    assert (
        [row["content"] for row in as_csv]
        == [row["content"] for row in as_json]
        == ['two "quoted"', "one, with a comma"]
    )
    assert [row["id"] for row in as_csv] == [row["id"] for row in as_json]
    assert json.loads(ok("recent", "-u", "nobody", "--json", *db)) == []
    assert isinstance(json.loads(ok("health", "--json", *db)), dict)
    assert runner.invoke(app, ["recent", "-u", "alice", "--json", "--csv", *db]).exit_code == 2


def test_graph_entities_unrelate_and_delete(in_tmp: Path) -> None:
    who = ("-u", "alice", "-a", "bot", "--db", "m.db")
    ok("graph", "add", "Alice", "--type", "person", *who)
    ok("graph", "add", "Acme", "--type", "company", *who)
    ok("graph", "add", "Lyon", "--type", "city", *who)
    ok("graph", "relate", "Alice", "WORKS_AT", "Acme", *who)
    ok("graph", "relate", "Acme", "LOCATED_IN", "Lyon", *who)
    page = json.loads(ok("graph", "entities", "--limit", "2", "--offset", "1", "--json", *who))
    assert len(page) == 2
    assert "of 3" in ok("graph", "entities", *who)
    ok("graph", "unrelate", "Alice", "WORKS_AT", "Acme", *who)
    assert json.loads(ok("graph", "neighbors", "Alice", "--json", *who)) == []
    acme = next(x for x in json.loads(ok("graph", "entities", "--json", *who)) if x["name"] == "Acme")
    ok("graph", "delete", acme["id"][:8], *who)
    assert {x["name"] for x in json.loads(ok("graph", "entities", "--json", *who))} == {"Alice", "Lyon"}
    assert json.loads(ok("graph", "neighbors", "Lyon", "--json", *who)) == []


def test_no_embed_leaves_records_waiting_and_health_counts_them(in_tmp: Path) -> None:
    ok("--no-embed", "record", "hello there", *WHO, "--db", "m.db")
    assert json.loads(ok("--no-embed", "health", "--json", "--db", "m.db"))["pending_embeddings"] == 1
    ok("health", "--db", "m.db")  # closing embeds what waits, as SyncMemory.close does
    assert json.loads(ok("health", "--json", "--db", "m.db"))["pending_embeddings"] == 0


def test_search_right_after_record_finds_it_by_meaning(in_tmp: Path) -> None:
    ok("--no-embed", "record", "I adore hiking in the Dolomites", *WHO, "--db", "m.db")
    ok("--no-embed", "record", "Tax forms are due on Friday", *WHO, "--db", "m.db")
    hits = json.loads(ok("search", "mountain holidays", "-u", "alice", "--json", "--db", "m.db"))
    assert hits[0]["record"]["content"] == "I adore hiking in the Dolomites" and hits[0]["vector_rank"] == 1


def test_the_first_embedding_of_a_machine_says_it_builds_the_int8_copy(in_tmp: Path) -> None:
    ok("record", "hello", *WHO, "--db", "m.db")
    # A fresh process: this one holds the model, and its int8 copy, from earlier tests.
    env = {**os.environ, "MNEMONITE_CACHE_DIR": str(in_tmp / "fresh-cache"), "PYTHONPATH": str(SRC)}
    search = [sys.executable, "-c", "from mnemonite.cli import main; main()", "search", "greeting", "-u", "alice"]
    first = subprocess.run([*search, "--db", "m.db"], env=env, capture_output=True, text=True, check=True)
    assert "building the int8 copy of the embedding model" in first.stderr
    again = subprocess.run([*search, "--db", "m.db"], env=env, capture_output=True, text=True, check=True)
    assert again.stderr == "" and "hello" in again.stdout


def test_a_failed_open_exits_cleanly_in_a_real_process(in_tmp: Path) -> None:
    (in_tmp / "notes.txt").write_text("not a database\n" * 100)
    command = [sys.executable, "-c", "from mnemonite.cli import main; main()", "health", "--db", "notes.txt"]
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["error: notes.txt is not a SQLite database (SQLite: file is not a database)"]


@pytest.mark.parametrize("command", [("index",), ("search", "greeting", "-u", "alice", "--fresh"), ("health",)])
def test_embedding_shows_a_progress_bar_on_a_terminal(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    from rich.console import Console

    from mnemonite.cli import _common

    ok("--no-embed", "record", "hello there", *WHO, "--db", "m.db")
    screen = io.StringIO()
    monkeypatch.setattr(_common, "err", Console(file=screen, force_terminal=True, width=100))
    ok(*command, "--db", "m.db")
    assert "embedding" in screen.getvalue() and "1/1" in screen.getvalue()


def test_episodes_are_purged_by_id_prefix_or_by_user_and_derived_facts_are_named(tmp_path: Path) -> None:
    db = ["--db", str(tmp_path / "m.db"), "--no-embed"]
    meta = ("--meta", "subject=alice", "--meta", "predicate=lives in", "--meta", "object=Oslo")
    ok(*db, "record", "I live in Oslo", *WHO, "--id", "said-oslo", *meta)
    ok(*db, "record", "I like tea", *WHO, "--id", "said-tea")
    ok(*db, "rules", "add", "r", "--every", "1")
    ok(*db, "consolidate", "r")
    purged = json.loads(ok(*db, "purge-episodes", "said-o", "--reason", "erasure request", "--json"))
    assert purged["episode_ids"] == ["said-oslo"] and len(purged["derived_fact_ids"]) == 1
    assert purged["fact_ids"] == []
    assert "not both" in fails(*db, "purge-episodes", "said-tea", "-u", "alice", "--reason", "x", code=2)
    assert "--reason" in fails(*db, "purge-episodes", "said-tea", code=2)
    assert "no episode" in fails(*db, "purge-episodes", "said-oslo", "--reason", "x")
    assert "said-tea" in ok(*db, "purge-episodes", "-u", "alice", "--reason", "account closed")
    assert json.loads(ok(*db, "recent", "-u", "alice", "--json")) == []


def test_export_then_import_round_trips_and_refuses_damage(tmp_path: Path) -> None:
    first, second = ["--db", str(tmp_path / "a.db"), "--no-embed"], ["--db", str(tmp_path / "b.db"), "--no-embed"]
    ok(*first, "record", "I keep bees [hobby]", *WHO, "--id", "bees")
    exported = json.loads(ok(*first, "export", str(tmp_path / "m.jsonl"), "--json"))
    assert exported["counts"]["episodes"] == 1
    imported = json.loads(ok(*second, "import", str(tmp_path / "m.jsonl"), "--json"))
    assert imported["sha256"] == exported["sha256"]
    assert json.loads(ok(*second, "recent", "-u", "alice", "--json"))[0]["content"] == "I keep bees [hobby]"
    assert "not empty" in fails(*second, "import", str(tmp_path / "m.jsonl"))
    assert "no export file" in fails(*second, "import", str(tmp_path / "missing.jsonl"))
    (tmp_path / "m.jsonl").write_text((tmp_path / "m.jsonl").read_text().replace("bees", "wasps"))
    assert "edited or damaged" in fails("--db", str(tmp_path / "c.db"), "import", str(tmp_path / "m.jsonl"))
    assert not (tmp_path / "c.db").exists()
    assert "no database" in fails("--db", str(tmp_path / "none.db"), "export", str(tmp_path / "n.jsonl"))
    assert not (tmp_path / "none.db").exists() and not (tmp_path / "n.jsonl").exists()


def test_a_kept_derived_fact_is_named_with_the_command_that_removes_it(tmp_path: Path) -> None:
    """Once the episodes are gone --derived finds none: the hint names the fact purge, which works."""
    db = ["--db", str(tmp_path / "m.db"), "--no-embed"]
    meta = ("--meta", "subject=alice", "--meta", "predicate=lives in", "--meta", "object=Oslo")
    ok(*db, "record", "I live in Oslo", *WHO, "--id", "said-oslo", *meta)
    ok(*db, "rules", "add", "r", "--every", "1")
    ok(*db, "consolidate", "r")
    said = ok(*db, "purge-episodes", "said-oslo", "--reason", "erasure request")
    assert "mnemonite purge FACT_ID" in said and "--derived" in said
    fact = json.loads(ok(*db, "facts", "-u", "alice", "--json"))[0]["id"]
    assert fact in said
    ok(*db, "purge", fact, "--reason", "erasure request")
    assert json.loads(ok(*db, "facts", "-u", "alice", "--json")) == []


def test_tables_show_stored_text_as_written_without_escape_sequences(tmp_path: Path) -> None:
    """A stored escape sequence is shown, not sent to the terminal; a backslash is not doubled; a long text is cut."""
    db = ["--db", str(tmp_path / "m.db"), "--no-embed"]
    ok(*db, "record", "\x1b[2J\x1b[31mRED", *WHO)
    ok(*db, "record", "dir C:\\temp\\", *WHO)
    ok(*db, "record", "x" * 5000, *WHO)
    shown = ok(*db, "recent", "-u", "alice")
    assert "\x1b" not in shown and "\\x1b[2J\\x1b[31mRED" in shown
    assert "dir C:\\temp\\ " in shown and "\\\\" not in shown
    content = column(shown, 5)
    assert "(4,400morecharacters;--jsonprintsall)" in content and "x" * 601 not in content
    assert json.loads(ok(*db, "recent", "-u", "alice", "--json"))[0]["content"] == "x" * 5000


def test_standard_input_that_is_not_utf8_is_named_so(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--db", str(tmp_path / "m.db"), "--no-embed", "record", "-", *WHO], input=b"caf\xe9")
    assert result.exit_code == 2 and "standard input is not valid UTF-8 (byte 0xE9 at position 3)" in result.stderr
    assert ok("--db", str(tmp_path / "m.db"), "--no-embed", "record", "-", *WHO, stdin="café") != ""
