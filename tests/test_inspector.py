"""The inspector's parts below the browser: one pending fact decided, past facts read by status (both
stores), the pages' answers to bad input, the drawing's arithmetic, and `mnemonite ui`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from mnemonite import Memory, Scope, SyncMemory
from mnemonite.errors import FactConflictError, NotFoundError
from mnemonite.models import Fact
from mnemonite.models.conflict import JudgeVerdict
from mnemonite.server import create_app
from mnemonite.server.ui.drawing import WIDTH, Axes, Axis, axes_for, bars, on_rings
from ui_browser import chromium_path

ALEX = Scope(user="alex", agent="a")
ROOT = Path(__file__).resolve().parents[1]


class NeverAsked:
    """A judge is configured, so the pipeline leaves what it cannot settle pending; a person decides."""

    async def judge(self, candidate: Fact, existing: Sequence[Fact]) -> JudgeVerdict:
        raise AssertionError("the judge is never asked here")


async def _pending(mem: Memory) -> str:
    mem.semantic.judge = NeverAsked()
    await mem.semantic.remember(ALEX, "My team ships the mobile app every Friday")
    decision = await mem.semantic.remember_with_decision(ALEX, "Our app release process is quite slow")
    assert decision.kind == "pending"
    return decision.fact_id


@pytest.fixture
async def with_model(memory_url: str) -> AsyncIterator[Memory]:
    """A `Memory` on SQLite, then on PostgreSQL, with the packaged model (the pipeline's zones need it)."""
    opened = await Memory.open(memory_url)
    yield opened
    await opened.close()


async def test_one_pending_fact_is_decided_and_audited(with_model: Memory) -> None:
    mem_on_both = with_model
    fact_id = await _pending(mem_on_both)
    verdict = JudgeVerdict(kind="admit", reason="approved by a person")
    with pytest.raises(NotFoundError):
        await mem_on_both.semantic.decide_pending(fact_id, verdict, scope=Scope(user="mallory", agent="a"))
    decision = await mem_on_both.semantic.decide_pending(fact_id, verdict, scope=ALEX)
    assert (decision.kind, decision.stage, decision.reason) == ("admit", "judge", "approved by a person")
    assert (await mem_on_both.semantic.get(fact_id)).status == "active"
    logged = await mem_on_both.semantic.conflicts(ALEX, fact_id=fact_id)
    assert [d.stage for d in logged] == ["embedding", "judge"]
    with pytest.raises(FactConflictError, match="not pending"):
        await mem_on_both.semantic.decide_pending(fact_id, verdict, scope=ALEX)
    assert len(await mem_on_both.semantic.conflicts(ALEX, fact_id=fact_id)) == 2


async def test_a_status_without_a_moment_reads_past_facts(mem_on_both: Memory) -> None:
    sem = mem_on_both.semantic
    old = await sem.remember(ALEX, "I live in Paris", subject="user", predicate="lives in", object="Paris")
    new = await sem.supersede(old.id, "I live in Berlin")
    gone = await sem.remember(ALEX, "I like jazz")
    await sem.forget(gone.id)
    assert [f.id for f in await sem.facts(ALEX, status="superseded")] == [old.id]
    assert [f.id for f in await sem.facts(ALEX, status="forgotten")] == [gone.id]
    assert [f.id for f in await sem.facts(ALEX, status="active")] == [new.id]
    assert {f.id for f in await sem.facts(ALEX)} == {new.id}
    then = await sem.facts(ALEX, as_of=new.recorded_at - timedelta(microseconds=1))
    assert [f.id for f in then] == [old.id]  # with a moment, the read is the replay it always was


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    db = str(tmp_path / "m.db")
    with SyncMemory.open(db, embedder=None) as mem:
        secret = mem.keys.create("alex", can="read").secret
    client = TestClient(create_app(db, mcp=False))
    client.headers["Authorization"] = f"Bearer {secret}"
    return client


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/ui/facts?as_of=yesterday", 422, "as_of is not a date and time"),
        ("/ui/timeline?limit=0", 422, "limit must be a whole number from 1 to 1000"),
        ("/ui/graph?depth=4&agent=a", 422, "depth must be a whole number from 1 to 3"),
        ("/ui/search?q=" + "x" * 2001, 422, "at most 2,000"),
        ("/ui/timeline?agent=a&user=bob", 200, "Timeline"),  # a user in the query is not read: the key's is
        ("/ui/facts/nope", 404, "no fact with id"),
    ],
)
def test_bad_input_gets_a_page_that_says_what_was_wrong(
    client: TestClient, path: str, status: int, message: str
) -> None:
    with client:
        answer = client.get(path)
    assert answer.status_code == status and message in answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in answer.headers["content-security-policy"]


def test_without_a_key_the_pages_ask_for_one(client: TestClient) -> None:
    del client.headers["Authorization"]
    with client:
        assert client.get("/ui/facts", follow_redirects=False).headers["location"] == "/ui/login"
        refused = client.post("/ui/facts/x/approve", follow_redirects=False)
        assert refused.status_code == 401 and "API key" in refused.text
        foreign = client.post("/ui/login", data={"key": "x"}, headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403 and "another site" in foreign.text


def test_a_read_key_cannot_post_approvals(client: TestClient) -> None:
    with client:
        answer = client.post("/ui/facts/anything/approve")
    assert answer.status_code == 403 and "cannot write" in answer.text


def test_bars_close_where_the_fact_was_closed() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    axis = Axis(t0, t0 + timedelta(days=100))
    day = timedelta(days=1)
    fact = Fact(id="f", rule_id="r", confidence=1.0, promotion_ts=t0, text="x", user="u", agent="a",
                valid_from=t0 + 10 * day, valid_to=t0 + 30 * day,
                recorded_at=t0 + 50 * day, superseded_at=t0 + 60 * day, status="superseded")  # fmt: skip
    drawn = bars(Axes(axis, axis), fact, now=t0 + timedelta(days=100))
    assert (drawn.valid_x, drawn.valid_w, drawn.valid_open) == (10.0, 20.0, False)
    assert (drawn.believed_x, drawn.believed_w, drawn.believed_open) == (50.0, 10.0, False)
    placed = on_rings("c", {"c": 0, "a": 1, "b": 1, "z": 2})
    assert [(p.id, p.ring) for p in placed] == [("c", 0), ("a", 1), ("b", 1), ("z", 2)]
    assert all(0 <= p.x <= 600 and 0 <= p.y <= 600 for p in placed)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_mnemonite_ui_serves_on_loopback_and_creates_a_key(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cli = "from mnemonite.cli import main; main()"
    db = str(tmp_path / "m.db")
    missing = subprocess.run(
        [sys.executable, "-c", cli, "ui", "--db", str(tmp_path / "typo" / "m.db"), "--user", "alex"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert missing.returncode == 1 and "no database at" in missing.stderr and not (tmp_path / "typo").exists()
    SyncMemory.open(db, embedder=None).close()
    command = [sys.executable, "-c", cli, "ui", "--db", db, "--port", str(port), "--user", "alex", "--json"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as process:
        try:
            assert process.stdout is not None
            announced = json.loads(process.stdout.readline())
            assert announced["url"] == f"http://127.0.0.1:{port}/ui/" and announced["key"].startswith("mnm_")
            answer = _when_up(f"http://127.0.0.1:{port}/ui/login")
            assert "Enter an API key" in answer.text
            with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
                logged = http.post("/ui/login", data={"key": announced["key"]})
                assert logged.status_code == 303 and "mnemonite_key" in logged.headers["set-cookie"]
                assert "Timeline" in http.get("/ui/timeline").text
        finally:
            process.terminate()
            process.wait(timeout=30)


def _when_up(url: str) -> httpx.Response:
    for _ in range(300):
        try:
            return httpx.get(url, timeout=5)
        except httpx.ConnectError:
            time.sleep(0.1)
    raise AssertionError(f"{url} never answered")


def test_every_view_renders_on_both_stores(memory_url: str) -> None:
    with SyncMemory.open(memory_url) as mem:
        old = mem.semantic.remember(ALEX, "I live in Paris", subject="user", predicate="lives in", object="Paris")
        new = mem.semantic.supersede(old.id, "I live in Berlin")
        ada = mem.graph.create_entity(ALEX, name="Ada", entity_type="person")
        acme = mem.graph.create_entity(ALEX, name="Acme", entity_type="company")
        mem.graph.relate(ALEX, source=ada.id, target=acme.id, relation="WORKS_AT")
        mem.episodic.record(Scope(user="alex", session="s1", agent="a"), "We talked about the Berlin flat")
        mem.working.define(ALEX, "persona", "Alex likes short answers")
        secret = mem.keys.create("alex", can="read,write,admin").secret
    expected = {
        "/ui/timeline": "Berlin flat",
        "/ui/timeline?q=flat": "Berlin flat",
        "/ui/facts": "I live in Paris",
        f"/ui/facts/{new.id}": "SUPERSEDES",
        "/ui/conflicts": "I live in Paris",
        f"/ui/graph?entity={ada.id}&depth=3": "WORKS_AT",
        "/ui/search?q=where+does+alex+live": "I live in Berlin",
        "/ui/status": "Alex likes short answers",
    }
    with TestClient(create_app(memory_url, mcp=False), headers={"Authorization": f"Bearer {secret}"}) as client:
        for path, text in expected.items():
            answer = client.get(path)
            assert answer.status_code == 200 and text in answer.text, path


def test_without_chromium_the_browser_tests_fail_saying_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.fail.Exception, match=r"sudo apt-get install -y chromium"):
        chromium_path()


def test_the_timeline_time_range_reaches_past_the_newest_page(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    start = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
    with SyncMemory.open(db, embedder=None) as mem:
        scope = Scope(user="alex", session="s1", agent="a")
        mem.episodic.record(scope, "The oldest note, from January", timestamp=start)
        for day in range(1, 30):
            mem.episodic.record(scope, f"Daily note {day}", timestamp=start + timedelta(days=day))
        secret = mem.keys.create("alex", can="read").secret
    with TestClient(create_app(db, mcp=False), headers={"Authorization": f"Bearer {secret}"}) as client:
        assert "The oldest note" not in client.get("/ui/timeline?limit=5").text
        page = client.get("/ui/timeline?limit=5&since=2026-01-01T00:00&until=2026-01-01T12:00").text
        assert "The oldest note, from January" in page and "Daily note" not in page


def test_a_key_of_the_whole_user_sees_every_agent_until_one_is_named(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    with SyncMemory.open(db, embedder=None) as mem:
        mem.episodic.record(Scope(user="alex", session="s1", agent="planner"), "Planner note about the trip")
        mem.episodic.record(Scope(user="alex", session="s1", agent="booker"), "Booker note about the hotel")
        secret = mem.keys.create("alex", can="read").secret
    with TestClient(create_app(db, mcp=False), headers={"Authorization": f"Bearer {secret}"}) as client:
        every = client.get("/ui/timeline").text
        assert "Planner note" in every and "Booker note" in every
        one = client.get("/ui/timeline?agent=booker").text
        assert "Booker note" in one and "Planner note" not in one
        graph = client.get("/ui/graph").text
        assert "A graph belongs to one agent" in graph and "/ui/graph?agent=booker" in graph


def test_moments_keep_their_milliseconds_when_they_have_them() -> None:
    from mnemonite.server.ui.render import when

    assert when(datetime(2026, 3, 2, 9, 0, 5, tzinfo=UTC)) == "2026-03-02 09:00:05 UTC"
    assert when(datetime(2026, 3, 2, 9, 0, 5, 335_000, tzinfo=UTC)) == "2026-03-02 09:00:05.335 UTC"
    assert when(None) == "now"


@pytest.mark.parametrize("moment", ["9999-12-31T00:00:00Z", "9990-01-01T00:00:00Z", "0001-01-01T00:00:00Z"])
def test_a_moment_at_the_ends_of_the_calendar_draws_its_page(tmp_path: Path, moment: str) -> None:
    """The timeline's margin ran past year 9999 (or before year 1): a 500 for every facts page of the user."""
    db = f"sqlite:///{tmp_path / 'm.db'}"
    with SyncMemory.open(db, embedder=None) as mem:
        secret = mem.keys.create("alex", can="read").secret
        mem.semantic.remember(ALEX, "The contract ends eventually", valid_from=datetime.fromisoformat(moment))
    client = TestClient(create_app(db, mcp=False))
    client.headers["Authorization"] = f"Bearer {secret}"
    with client:
        assert client.get("/ui/facts").status_code == 200
        assert client.get("/ui/facts", params={"as_of": moment}).status_code == 200


def test_ticks_never_pass_the_axis_end_where_rounded_steps_would() -> None:
    """A step is rounded to a microsecond: five of them could pass the end, past year 9999 an OverflowError."""
    end = datetime.max.replace(tzinfo=UTC)
    ticks = Axis(end - timedelta(microseconds=3), end).ticks()
    assert len(ticks) == 5 and ticks[-1] == (WIDTH, end)
    assert [moment for _, moment in ticks] == sorted(moment for _, moment in ticks)


def test_each_clock_has_its_own_axis() -> None:
    """A fact about last year recorded a second ago: one shared axis drew its belief as a sliver at the end."""
    now = datetime(2026, 11, 28, 12, tzinfo=UTC)
    fact = Fact(id="f", rule_id="r", confidence=1.0, promotion_ts=now, text="x", user="u", agent="a",
                valid_from=now - timedelta(days=365), recorded_at=now - timedelta(seconds=1))  # fmt: skip
    axes = axes_for([fact], now, as_of=now - timedelta(seconds=2))
    assert axes.world.start < now - timedelta(days=365) and axes.world.end > now
    assert now - timedelta(seconds=4) < axes.belief.start < now - timedelta(seconds=2) < now < axes.belief.end
    drawn = bars(axes, fact, now)
    assert drawn.valid_w > 90 and drawn.believed_w > 20  # in percent of each axis


@pytest.mark.parametrize(
    ("span", "reads"),
    [
        (timedelta(days=400), ["2026-01-01", "2026-04-11", "2026-07-20", "2026-10-28", "2027-02-05"]),
        (timedelta(days=1), ["2026-01-01 00:00", "06:00", "12:00", "18:00", "2026-01-02 00:00"]),
        (timedelta(hours=3), ["2026-01-01 00:00", "00:45", "01:30", "02:15", "03:00"]),
        (timedelta(minutes=2), ["2026-01-01 00:00:00", "00:00:30", "00:01:00", "00:01:30", "00:02:00"]),
        (timedelta(seconds=2), ["2026-01-01 00:00:00.000", "00:00:00.500", "00:00:01.000", "00:00:01.500",
                                "00:00:02.000"]),
    ],
)  # fmt: skip
def test_tick_labels_tell_every_tick_apart(span: timedelta, reads: list[str]) -> None:
    """A fact page spanning one day labelled six ticks with the same date: a short span reads as times of day."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    labels = Axis(start, start + span).labels()
    assert [f"{t.day} {t.clock}".strip() for t in labels] == reads
