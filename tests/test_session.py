"""The session tier on both stores: the message log, full text, attribution, flush, compaction, export and replay."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemonite import InvalidInputError, Memory, MemoryConfig, MemoryScopeError, NotFoundError, Scope, SyncMemory
from mnemonite.copy import GENERATED, _columns, _reading, copy_memory
from mnemonite.models.messages import Message
from mnemonite.privacy import Reveal
from mnemonite.store.sql import TABLES

CHAT = Scope(user="alice", session="trip", agent="planner")
ADVERSARIAL = ["alice", "alice2", "Alice", "a%", "a_b", "x/y", "%", "_", "\\", "a\\%"]
# Written by the store when a row is inserted (system time), so not part of what a replay reproduces.
NOT_CONTENT = {"seq", "recorded_at"} | GENERATED


AGENT_TABLES = {
    "blocks", "block_agents", "session_messages", "session_events", "procedures", "agent_groups", "group_members",
    "shared_items",
}  # fmt: skip


async def table_hashes(mem: Memory, tables: set[str] | None = None) -> dict[str, str]:
    """sha256 of every table's rows (content columns by name, rows sorted) of a memory."""
    hashes = {}
    async with _reading(mem._store) as db:
        for table, _ in TABLES:
            if tables is not None and table not in tables:
                continue
            columns = sorted(c for c in await _columns(db, table) if c not in NOT_CONTENT)
            cursor = await db.execute(f"SELECT {', '.join(columns)} FROM {table}")
            rows = sorted(orjson.dumps([_plain(v) for v in row]) for row in await cursor.fetchall())
            hashes[table] = hashlib.sha256(b"\n".join(rows)).hexdigest()
    return hashes


def _plain(value: Any) -> Any:
    return bytes(value).hex() if isinstance(value, bytes | memoryview) else value


async def test_push_list_and_search(mem_on_both: Memory) -> None:
    s = mem_on_both.session
    await s.push(CHAT, Message("user", "Find me a train from Lisbon to Porto."))
    await s.push(CHAT, Message("assistant", "The 9:00 Alfa Pendular takes three hours."))
    await s.push(CHAT, Message("assistant", "I booked the hotel in Porto.", agent="booker"))
    turns = await s.list(CHAT.model_copy(update={"agent": None}))
    assert [(m.role, m.agent) for m in turns] == [
        ("user", "planner"),
        ("assistant", "planner"),
        ("assistant", "booker"),
    ]
    assert all((m.user, m.session, m.sensitivity) == ("alice", "trip", "internal") for m in turns)
    assert [m.content for m in await s.list(CHAT, limit=1)] == ["The 9:00 Alfa Pendular takes three hours."]
    hits = await s.search(Scope(user="alice", session="trip"), "trains to porto", k=5)
    assert hits[0].message.content.startswith("Find me a train") and len(hits) == 2
    assert [h.message.agent for h in await s.search(Scope(user="alice", agent="booker"), "porto")] == ["booker"]
    assert await s.search(Scope(user="alice", session="other"), "porto") == []
    assert await s.search(CHAT, "the of") == []  # stop words only
    hidden = await s.push(CHAT, Message("user", "Not hidden by a forged mark.", compacted_into="x"))
    assert hidden.compacted_into is None and (await s.list(CHAT, limit=1))[0].id == hidden.id


async def test_a_retried_message_id_is_written_once_and_a_taken_one_refused(mem_on_both: Memory) -> None:
    """A client's retry of a message (same id) is a no-op; another user's id is taken, and not described."""
    s = mem_on_both.session
    await s.push(CHAT, Message("user", "retry me", id="client-msg-7"))
    await s.push(CHAT, Message("user", "retry me", id="client-msg-7"))
    assert [m.id for m in await s.list(CHAT)] == ["client-msg-7"]
    with pytest.raises(InvalidInputError, match="another content"):
        await s.push(CHAT, Message("user", "something else", id="client-msg-7"))
    with pytest.raises(InvalidInputError, match=r"^message id 'client-msg-7' is taken: choose another id$"):
        await s.push(Scope(user="bob", session="trip", agent="planner"), Message("user", "a guess", id="client-msg-7"))
    assert [m.content for m in await s.list(CHAT)] == ["retry me"]


async def test_attribution_says_who_said_read_wrote_and_called_what(mem_on_both: Memory) -> None:
    booker = CHAT.model_copy(update={"agent": "booker"})
    await mem_on_both.session.push(CHAT, Message("assistant", "Let me plan."))
    await mem_on_both.working.define(booker, "bookings", "")
    await mem_on_both.working.append(booker, "bookings", "hotel Porto")
    await mem_on_both.working.read(CHAT.model_copy(update={"agent": "booker"}), "bookings")
    await mem_on_both.session.log_event(booker, "tool_call", "book_hotel", {"city": "Porto"})
    mine = await mem_on_both.session.attributed_for(Scope(user="alice", session="trip"), "booker")
    assert mine.said == []
    assert [e.name for e in mine.wrote] == ["working.define", "working.append"]
    assert [e.name for e in mine.read] == ["working.read"] and [e.name for e in mine.tool_calls] == ["book_hotel"]
    planner = await mem_on_both.session.attributed_for("alice", "planner")
    assert [m.content for m in planner.said] == ["Let me plan."] and planner.wrote == []


async def test_flush_important_promotes_marked_and_salient_turns_once(mem_on_both: Memory) -> None:
    s = mem_on_both.session
    await s.push(CHAT, Message("user", "hello"))
    marked = await s.push(CHAT, Message("user", "I am allergic to peanuts.", important=True))
    salient = await s.push(CHAT, Message("user", "My passport expires in May.", metadata={"importance": 8}))
    await s.push(CHAT, Message("user", "ok thanks", metadata={"importance": 2}))
    episodes = await s.flush_important(CHAT)
    assert [e.id for e in episodes] == [marked.id, salient.id]
    stored = await mem_on_both.episodic.get(marked.id)
    assert (stored.content, stored.session, stored.agent, stored.timestamp) == (
        marked.content, "trip", "planner", marked.timestamp,
    )  # fmt: skip
    assert stored.metadata["source"] == "session" and stored.metadata["message_id"] == marked.id
    assert await s.flush_important(CHAT) == []


async def test_compact_summarises_older_turns_and_keeps_every_turn(mem_on_both: Memory, tmp_path: Path) -> None:
    s = mem_on_both.session
    for i in range(12):
        speaker = "planner" if i % 2 else "booker"
        await s.push(CHAT, Message("assistant", f"Turn {i} about trains to Porto. Filler words here.", agent=speaker))
    summary = await s.compact(CHAT, keep_last=4, max_lines=3)
    assert summary is not None and summary.role == "system"
    assert summary.content.startswith("Summary of 8 earlier turns:") and summary.content.count("\n- ") == 3
    assert "booker (assistant): Turn" in summary.content  # attribution kept
    assert summary.metadata["speakers"] == {"booker": 4, "planner": 4}
    visible = await s.list(Scope(user="alice", session="trip"))
    assert visible[0].content == summary.content and len(visible) == 5
    everything = await s.list(Scope(user="alice", session="trip"), compacted=True, limit=100)
    assert len(everything) == 13 and sum(m.compacted_into == summary.id for m in everything) == 8
    assert await s.compact(CHAT, keep_last=100) is None
    await s.export(CHAT, tmp_path / "s.jsonl")
    lines = (tmp_path / "s.jsonl").read_bytes().splitlines()
    assert sum(b'"session.push"' in line for line in lines) == 12  # every turn stays in the export


async def test_export_and_replay_reproduce_every_table(memory_url: str, tmp_path: Path) -> None:
    config = MemoryConfig(embedder="none")
    booker = CHAT.model_copy(update={"agent": "booker"})
    async with await Memory.open(memory_url, config=config) as mem:
        await mem.working.define(CHAT, "plan", "Day 1: Lisbon", limit=200)
        await mem.session.push(CHAT, Message("user", "Add Porto on day 2, please.", important=True))
        await mem.working.append(CHAT, "plan", "Day 2: Porto")
        await mem.working.attach(CHAT, "plan", "booker")
        await mem.working.patch(booker, "plan", "Porto", "Porto (hotel booked)")
        await mem.session.push(booker, Message("assistant", "Booked the Porto hotel.", sensitivity="secret"))
        await mem.session.log_event(booker, "tool_call", "book_hotel", {"city": "Porto"})
        await mem.working.compile(CHAT)
        await mem.session.flush_important(CHAT)
        await mem.procedural.define(CHAT, "book-hotel", ["Search", "Book"], trigger="a hotel is needed")
        await mem.procedural.define(CHAT, "scratch", ["Think"])
        await mem.procedural.remove(CHAT, "scratch")
        await mem.procedural.activate(CHAT, "find a hotel")
        await mem.shared.create(CHAT, "travellers")
        await mem.shared.add_member(CHAT, "travellers", booker)
        shared = await mem.shared.attach(CHAT, "travellers", block="plan")
        await mem.shared.list_for(booker)
        await mem.shared.add_member(CHAT, "travellers", Scope(user="bob", agent="planner"))
        await mem.shared.remove_member(CHAT, "travellers", booker)
        await mem.shared.detach(CHAT, "travellers", shared.id)
        await mem.shared.attach(CHAT, "travellers", block="plan", sensitivity="secret")
        for i in range(6):
            await mem.session.push(CHAT, Message("user", f"Question {i} about the trip."))
        await mem.session.compact(CHAT, keep_last=2)
        await mem.working.detach(CHAT, "plan", "booker")
        # the session holds secret turns: only an export that reveals them can be replayed
        count = await mem.session.export(CHAT, tmp_path / "trip.jsonl", reveal=Reveal("replay elsewhere"))
        before = await table_hashes(mem)
    replayed_url = f"sqlite:///{tmp_path / 'replayed.db'}"
    async with await Memory.open(replayed_url, config=config) as other:
        assert await other.session.replay(tmp_path / "trip.jsonl") == count
        after = await table_hashes(other)
        with pytest.raises(InvalidInputError, match="already"):
            await other.session.replay(tmp_path / "trip.jsonl")
        assert await table_hashes(other) == after
    assert after == before


async def test_copy_carries_the_agent_tiers_between_backends(memory_url: str, tmp_path: Path) -> None:
    config = MemoryConfig(embedder="none")
    source = f"sqlite:///{tmp_path / 'source.db'}"
    async with await Memory.open(source, config=config) as mem:
        await mem.working.define(CHAT, "plan", "Day 1: Lisbon")
        await mem.working.attach(CHAT, "plan", "booker")
        await mem.session.push(CHAT, Message("user", "Trains to Porto, please."))
        await mem.procedural.define(CHAT, "book-train", ["Search", "Book"], trigger="rail travel")
        await mem.shared.create(CHAT, "travellers")
        await mem.shared.attach(CHAT, "travellers", block="plan")
        before = await table_hashes(mem, AGENT_TABLES)
    report = await copy_memory(source, memory_url)
    assert report.ok and report.source["session_events"] == 6
    async with await Memory.open(memory_url, config=config) as copied:
        assert await table_hashes(copied, AGENT_TABLES) == before
        assert [h.message.content for h in await copied.session.search(CHAT, "porto")] == ["Trains to Porto, please."]
        assert (await copied.procedural.activate(CHAT, "a rail trip"))[0].procedure.name == "book-train"
        await copied.session.push(CHAT, Message("user", "One more."))  # the copy's counters continue after its rows


async def test_replay_refuses_files_that_are_not_exports(mem_on_both: Memory, tmp_path: Path) -> None:
    await mem_on_both.session.push(CHAT, Message("user", "hi"))
    await mem_on_both.session.export(CHAT, tmp_path / "ok.jsonl")
    good = (tmp_path / "ok.jsonl").read_bytes()
    cases = {
        "garbage": b"not json\n",
        "other-format": orjson.dumps({"format": "x", "version": 1}) + b"\n",
        "cut": good.splitlines()[0] + b"\n",
        "bad-event": good.splitlines()[0] + b"\n" + orjson.dumps({"event": {"kind": "nope"}}) + b"\n",
        "no-record": _header(good, 2) + good.splitlines()[1] + b"\n" + _broken(good) + b"\n",
    }
    async with await Memory.open(f"sqlite:///{tmp_path / 'empty.db'}", config=MemoryConfig(embedder="none")) as other:
        before = await table_hashes(other)
        for name, body in cases.items():
            (tmp_path / name).write_bytes(body)
            with pytest.raises(InvalidInputError):
                await other.session.replay(tmp_path / name)
        with pytest.raises(NotFoundError):
            await other.session.replay(tmp_path / "missing.jsonl")
        assert await table_hashes(other) == before


def _header(export: bytes, events: int) -> bytes:
    return orjson.dumps({**orjson.loads(export.splitlines()[0]), "events": events}) + b"\n"


def _broken(export: bytes) -> bytes:
    """A well-formed event whose write carries no record: found only while replaying, after the first event."""
    event = orjson.loads(export.splitlines()[1])["event"]
    return orjson.dumps(
        {"event": {**event, "id": "other", "kind": "memory_write", "name": "working.write", "payload": {}}}
    )


async def test_bad_input_is_refused_and_changes_nothing(mem_on_both: Memory) -> None:
    s = mem_on_both.session
    with pytest.raises(MemoryScopeError):
        await s.push(Scope(user="alice", agent="planner"), Message("user", "no session"))
    with pytest.raises(MemoryScopeError):
        await s.push(Scope(user="alice", session="trip"), Message("user", "no agent"))
    with pytest.raises(MemoryScopeError):
        await s.push(CHAT, Message("user", "wrong user", user="bob"))
    for bad in ({"role": "boss", "content": "x"}, {"role": "user", "content": "  "}, {"role": "user"}):
        with pytest.raises(InvalidInputError):
            Message(**bad)
    with pytest.raises(InvalidInputError, match="sensitivity"):
        Message("user", "x", sensitivity="classified")
    with pytest.raises(InvalidInputError):
        await s.push(CHAT, "just text")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        await s.list(CHAT, limit=0)
    with pytest.raises(InvalidInputError, match="non-empty"):
        await s.search(CHAT, "  ")  # as mem.search: an empty query is a mistake, not "nothing found"
    with pytest.raises(InvalidInputError):
        await s.log_event(CHAT, "gossip", "x")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        await s.compact(CHAT, keep_last=-1)
    with pytest.raises(InvalidInputError):
        await s.compact(CHAT, max_lines=0)
    with pytest.raises(MemoryScopeError, match="agent"):
        await s.log_event(Scope(user="alice", session="trip"), "tool_call", "t")
    for verb in (s.flush_important, s.compact):
        with pytest.raises(MemoryScopeError, match="session"):
            await verb(Scope(user="alice", agent="planner"))
    with pytest.raises(InvalidInputError):
        await s.search(CHAT, 42)  # type: ignore[arg-type]
    with pytest.raises(NotFoundError):
        await s.export(CHAT, "/tmp/never-written.jsonl")
    assert await s.list("alice", compacted=True) == [] and await s.events("alice") == []


def test_sync_memory_delegates(tmp_path: Path) -> None:
    with SyncMemory.open(f"sqlite:///{tmp_path}/m.db", config=MemoryConfig(embedder="none")) as mem:
        mem.session.push(CHAT, Message("user", "hello there"))
        assert [h.message.content for h in mem.session.search(CHAT, "hello")] == ["hello there"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(owner=st.tuples(*[st.sampled_from(ADVERSARIAL)] * 3), reader=st.tuples(*[st.sampled_from(ADVERSARIAL)] * 3))
def test_no_message_or_event_is_read_across_scopes(memory_url: str, owner: tuple[str, str, str],
                                                   reader: tuple[str, str, str]) -> None:  # fmt: skip
    asyncio.run(_cross_scope(memory_url, Scope(user=owner[0], session=owner[1], agent=owner[2]),
                             Scope(user=reader[0], session=reader[1], agent=reader[2])))  # fmt: skip


async def _cross_scope(url: str, owner: Scope, reader: Scope) -> None:
    word = f"w{uuid.uuid4().hex}"  # examples share the database: this example's own word
    async with await Memory.open(url, config=MemoryConfig(embedder="none")) as mem:
        await mem.session.push(owner, Message("user", f"secret {word}"))
        await mem.session.log_event(owner, "tool_call", "t", {"word": word})
        readers = [reader, reader.model_copy(update={"agent": None}), reader.model_copy(update={"session": None})]
        for scope in [*readers, Scope(user=reader.user)]:
            seen = await mem.session.list(scope, compacted=True, limit=10_000)
            hits = await mem.session.search(scope, word)
            events = await mem.session.events(scope)
            mine = [m for m in seen if word in m.content] + [h.message for h in hits]
            mine += [e for e in events if e.payload.get("word") == word]  # type: ignore[misc]
            widened = scope.user == owner.user and scope.session in (None, owner.session)
            assert bool(mine) == (widened and scope.agent in (None, owner.agent)), (scope, owner)
            told = await mem.session.attributed_for(scope, owner.agent or "x")  # any agent of the scope's sessions
            attributed = [m for m in told.said if word in m.content]
            attributed += [e for e in told.tool_calls if e.payload == {"word": word}]  # type: ignore[misc]
            assert bool(attributed) == widened, (scope, owner)


async def test_secret_turns_are_redacted_in_an_export_unless_revealed(mem_on_both: Memory, tmp_path: Path) -> None:
    from mnemonite.privacy import MARKER, Reveal

    s = mem_on_both.session
    await s.push(CHAT, Message("user", "let's plan the trip", agent="planner"))
    await s.push(
        CHAT, Message("user", "my door code is plum-zebra", agent="planner", sensitivity="secret", important=True)
    )
    [episode] = await s.flush_important(CHAT)
    assert episode.sensitivity == "secret"  # promoted, the turn keeps its sensitivity
    shared = tmp_path / "shared.jsonl"
    await s.export(CHAT, shared)
    text = shared.read_bytes()
    assert b"plum-zebra" not in text and MARKER.encode() in text and b"plan the trip" in text
    assert orjson.loads(text.splitlines()[0])["redacted"] is True
    backup = tmp_path / "backup.jsonl"
    await s.export(CHAT, backup, reveal=Reveal("moving the session"))
    assert (
        b"plum-zebra" in backup.read_bytes() and orjson.loads(backup.read_bytes().splitlines()[0])["redacted"] is False
    )
    config = MemoryConfig(embedder="none")
    async with await Memory.open(f"sqlite:///{tmp_path / 'other.db'}", config=config) as other:
        with pytest.raises(InvalidInputError, match="redacted"):
            await other.session.replay(shared)
        assert await other.session.list(CHAT) == []  # refused whole
        assert await other.session.replay(backup) > 0
        assert [m.content for m in await other.session.list(CHAT)][-1] == "my door code is plum-zebra"
    with pytest.raises(InvalidInputError):
        await s.export(CHAT, tmp_path / "x.jsonl", reveal=True)  # type: ignore[arg-type]  # a capability, not a flag


async def test_list_until_reads_the_messages_up_to_a_moment(mem_on_both: Memory) -> None:
    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    for minute in range(5):
        await mem_on_both.session.push(
            CHAT, Message("user", f"turn {minute}", timestamp=start + timedelta(minutes=minute))
        )
    older = await mem_on_both.session.list(CHAT, limit=2, until=start + timedelta(minutes=2))
    assert [m.content for m in older] == ["turn 1", "turn 2"]
    assert await mem_on_both.session.list(CHAT, until=start - timedelta(minutes=1)) == []
