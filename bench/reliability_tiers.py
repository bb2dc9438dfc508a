"""Reliability of the agent tiers' inputs: odd values into the working, session, procedural and shared tiers,
the nine tools (through the dispatcher, as a model sends them), the consolidator, the concept graph and the
lifecycle; and adversarial scope ids over their read surfaces.

    python bench/reliability.py --quick           # with the other modules, on both backends

`rows(backend, url, quick)` is what `bench/reliability.py` calls with a fresh, empty memory URL per
backend. A method call fails the probe when it raises anything but a `MnemoniteError` or when it is
refused and the database changed (`reliability_inputs.probe`). A tool call never raises: it fails the
probe when it raises anyway, when it answers ``internal_error`` (an untyped error inside), or when it
is refused and anything but its own audit row (``tool_calls``, its ``tool_call`` session event) changed.
The catalogues (`CALLS`, `TOOL_ARGUMENTS`) are also what `tests/reliability/` fuzzes with hypothesis.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from mnemonite import Episode, Memory, MemoryConfig, Message, MnemoniteError, Scope
from mnemonite.models.concepts import EventNode
from mnemonite.tools import TOOLS
from reliability_inputs import ODD, _row, _table_rows, close_connections, probe, values_for

Call = Callable[[Memory, Any], Awaitable[object]]
US = Scope(user="u", agent="a")
SS = Scope(user="u", session="s", agent="a")
T0 = datetime(2025, 1, 1, tzinfo=UTC)
WHO = {"user": "u", "session": "s", "agent": "a"}


def _working_calls() -> dict[str, Call]:
    return {
        "working.define label": lambda m, v: m.working.define(US, v, "x"),
        "working.define value": lambda m, v: m.working.define(US, "fuzz", v),
        "working.define description": lambda m, v: m.working.define(US, "fuzz2", "x", description=v),
        "working.write value": lambda m, v: m.working.write(US, "persona", v),
        "working.write label": lambda m, v: m.working.write(US, v, "x"),
        "working.append text": lambda m, v: m.working.append(US, "persona", v),
        "working.append separator": lambda m, v: m.working.append(US, "persona", "x", separator=v),
        "working.patch old": lambda m, v: m.working.patch(US, "persona", v, "x"),
        "working.patch new": lambda m, v: m.working.patch(US, "persona", "tea", v),
        "working.attach agent": lambda m, v: m.working.attach(US, "persona", v),
        "working.detach agent": lambda m, v: m.working.detach(US, "persona", v),
        "working.read label": lambda m, v: m.working.read(US, v),
        "working.list scope": lambda m, v: m.working.list(v),
    }


def _session_calls() -> dict[str, Call]:
    return {
        "session.push content": lambda m, v: m.session.push(SS, Message("user", v)),
        "session.push role": lambda m, v: m.session.push(SS, Message(v, "hello")),
        "session.push id": lambda m, v: m.session.push(SS, Message("user", "hello", id=v)),
        "session.push metadata": lambda m, v: m.session.push(SS, Message("user", "hi", metadata={"k": v})),
        "session.push_many messages": lambda m, v: m.session.push_many(SS, [v]),
        "session.list scope": lambda m, v: m.session.list(v),
        "session.search query": lambda m, v: m.session.search(SS, v),
        "session.attributed_for agent": lambda m, v: m.session.attributed_for(SS, v),
        "session.log_event name": lambda m, v: m.session.log_event(SS, "tool_call", v),
        "session.log_event kind": lambda m, v: m.session.log_event(SS, v, "n"),
        "session.log_event payload": lambda m, v: m.session.log_event(SS, "tool_call", "n", {"k": v}),
        "session.events scope": lambda m, v: m.session.events(v),
        "session.replay path": lambda m, v: m.session.replay(v),
        "procedural.define name": lambda m, v: m.procedural.define(US, v, ["step"]),
        "procedural.define step": lambda m, v: m.procedural.define(US, "fuzz", [v]),
        "procedural.define trigger": lambda m, v: m.procedural.define(US, "fuzz", ["step"], trigger=v),
        "procedural.remove name": lambda m, v: m.procedural.remove(US, v),
        "procedural.list scope": lambda m, v: m.procedural.list(v),
        "procedural.activate task": lambda m, v: m.procedural.activate(US, v),
    }


def _shared_calls() -> dict[str, Call]:
    return {
        "shared.create name": lambda m, v: m.shared.create(US, v),
        "shared.create kind": lambda m, v: m.shared.create(US, "fuzz", kind=v),
        "shared.add_member group": lambda m, v: m.shared.add_member(US, v, Scope(user="u", agent="b")),
        "shared.add_member member": lambda m, v: m.shared.add_member(US, "team", Scope(user=v, agent="c")),
        "shared.remove_member group": lambda m, v: m.shared.remove_member(US, v, Scope(user="u", agent="b")),
        "shared.attach group": lambda m, v: m.shared.attach(US, v, block="persona"),
        "shared.attach fact_id": lambda m, v: m.shared.attach(US, "team", fact_id=v),
        "shared.attach block": lambda m, v: m.shared.attach(US, "team", block=v),
        "shared.detach item": lambda m, v: m.shared.detach(US, "team", v),
        "shared.list_for group": lambda m, v: m.shared.list_for(US, group=v),
        "shared.groups scope": lambda m, v: m.shared.groups(Scope(user=v, agent="a")),
    }


def _later_calls() -> dict[str, Call]:
    return {
        "consolidator.run phase": lambda m, v: m.consolidator.run(v),
        "consolidator.run user": lambda m, v: m.consolidator.run("light", user=v),
        "consolidator.summaries": lambda m, v: m.consolidator.summaries(v),
        "consolidator.topic_episodes": lambda m, v: m.consolidator.topic_episodes(v),
        "concepts.observe text": lambda m, v: m.concepts.observe(SS, EventNode(text=v)),
        "concepts.consolidate text": lambda m, v: m.concepts.consolidate(US, [EventNode(text=f"tea {v}")]),
        "concepts.consolidate record_id": lambda m, v: m.concepts.consolidate(
            US, [EventNode(text="green tea in Kyoto", record_id=v)]
        ),
        "concepts.query question": lambda m, v: m.concepts.query(US, v),
        "concepts.load_graph scope": lambda m, v: m.concepts.load_graph(Scope(user=v, agent="a")),
        "lifecycle.sweep scope": lambda m, v: m.lifecycle.sweep(v),
        "lifecycle.stats scope": lambda m, v: m.lifecycle.stats(v),
        "lifecycle.tiers ids": lambda m, v: m.lifecycle.tiers("episode", [v]),
        "lifecycle.search query": lambda m, v: m.lifecycle.search("u", v),
    }


def _number_calls() -> dict[str, Call]:
    return {
        "working.define limit": lambda m, v: m.working.define(US, "lim", "x", limit=v),
        "working.define token_limit": lambda m, v: m.working.define(US, "tok", "x", token_limit=v),
        "working.compile max_tokens": lambda m, v: m.working.compile(US, v),
        "session.list limit": lambda m, v: m.session.list(SS, limit=v),
        "session.search k": lambda m, v: m.session.search(SS, "hello", v),
        "session.compact keep_last": lambda m, v: m.session.compact(SS, keep_last=v),
        "session.compact max_lines": lambda m, v: m.session.compact(SS, max_lines=v),
        "procedural.activate k": lambda m, v: m.procedural.activate(US, "deploy the app", v),
        "consolidator.run max_jobs": lambda m, v: m.consolidator.run("light", max_jobs=v),
        "concepts.query top_k": lambda m, v: m.concepts.query(US, "tea", v),
        "concepts.versions limit": lambda m, v: m.concepts.versions(US, limit=v),
        "lifecycle.search k": lambda m, v: m.lifecycle.search("u", "tea", v),
        "lifecycle.search enough": lambda m, v: m.lifecycle.search("u", "tea", enough=v),
    }


def _float_calls() -> dict[str, Call]:
    return {
        "session.flush_important min_importance": lambda m, v: m.session.flush_important(SS, min_importance=v),
        "procedural.activate min_similarity": lambda m, v: m.procedural.activate(US, "deploy", min_similarity=v),
        "lifecycle.search min_cosine": lambda m, v: m.lifecycle.search("u", "tea", min_cosine=v),
    }


def _any_calls() -> dict[str, Call]:
    return {
        "working.define scope": lambda m, v: m.working.define(v, "any", "x"),
        "working.define read_only": lambda m, v: m.working.define(US, "ro", "x", read_only=v),
        "working.define sensitivity": lambda m, v: m.working.define(US, "sens", "x", sensitivity=v),
        "working.compile reveal": lambda m, v: m.working.compile(US, reveal=v),
        "session.push message": lambda m, v: m.session.push(SS, v),
        "session.push scope": lambda m, v: m.session.push(v, Message("user", "hi")),
        "session.push_many iterable": lambda m, v: m.session.push_many(SS, v),
        "session.list compacted": lambda m, v: m.session.list(SS, compacted=v),
        "procedural.define steps": lambda m, v: m.procedural.define(US, "fuzz", v),
        "procedural.define sensitivity": lambda m, v: m.procedural.define(US, "fuzz", ["s"], sensitivity=v),
        "shared.attach sensitivity": lambda m, v: m.shared.attach(US, "team", block="persona", sensitivity=v),
        "shared.add_member owner": lambda m, v: m.shared.add_member(US, "team", Scope(user="u", agent="d"), owner=v),
        "tools.calls limit": lambda m, v: m.tools.calls(US, limit=v),
        "concepts.observe event": lambda m, v: m.concepts.observe(SS, v),
        "concepts.consolidate events": lambda m, v: m.concepts.consolidate(US, v),
        "concepts.flush scope": lambda m, v: m.concepts.flush(v),
        "lifecycle.access records": lambda m, v: m.lifecycle.access(v),
        "lifecycle.sweep now": lambda m, v: m.lifecycle.sweep("u", now=v),
        "lifecycle.tiers kind": lambda m, v: m.lifecycle.tiers(v, ["e1"]),
        "lifecycle.search tiers": lambda m, v: m.lifecycle.search("u", "tea", tiers=v),
    }


# Each call with the kind of value it is fuzzed with (wrong types always join in).
CALLS: dict[str, tuple[str, Call]] = {
    **{name: ("text", call) for name, call in {**_working_calls(), **_session_calls()}.items()},
    **{name: ("text", call) for name, call in {**_shared_calls(), **_later_calls()}.items()},
    **{name: ("int", call) for name, call in _number_calls().items()},
    **{name: ("float", call) for name, call in _float_calls().items()},
    **{name: ("wrong", call) for name, call in _any_calls().items()},
}

# A good value of every tool argument; each is made odd in turn.
GOOD: dict[str, Any] = {
    "label": "persona",
    "text": "tea",
    "old": "tea",
    "new": "coffee",
    "value": "tea",
    "query": "tea",
    "fact_id": "missing",
    "k": 3,
    "memory_type": "fact",
    "sensitivity": "internal",
}
# Every tool's arguments: (tool, argument, the other arguments a call needs).
TOOL_ARGUMENTS: list[tuple[str, str, dict[str, Any]]] = [
    (tool, name, {other: GOOD[other] for other in spec.input.model_fields if other != name})
    for tool, spec in TOOLS.items()
    for name in spec.input.model_fields
]


async def seed(mem: Memory) -> dict[str, str]:
    """What the calls find: a block, a conversation, a procedure, a group sharing a fact, a concept graph
    and an accessed episode; the ids of the fact and the episode."""
    await mem.working.define(US, "persona", "likes tea")
    await mem.session.push_many(SS, [Message("user", "hello there"), Message("assistant", "hi, tea?")])
    await mem.procedural.define(US, "deploy", ["build", "ship"], trigger="deploy the app")
    await mem.shared.create(US, "team")
    fact = await mem.semantic.remember(US, "I like green tea")
    await mem.shared.attach(US, "team", fact_id=fact.id)
    episode = await mem.episodic.put(Episode(id="e1", content="tea in Kyoto", timestamp=T0), **WHO)
    await mem.concepts.consolidate(US, [EventNode(text="green tea in Kyoto", record_id="e1")])
    await mem.lifecycle.access([episode])
    await mem.consolidator.run("light")
    return {"fact": fact.id, "episode": episode.id}


# -- the tools, through the dispatcher ---------------------------------------------------------

_AUDIT_TABLES = frozenset({"tool_calls", "session_events"})


def data_hash(url: str) -> str:
    """sha256 over every row of every table but the audit's: what a refused tool call must not change."""
    digest = hashlib.sha256()
    for table, rows in sorted(_table_rows(url).items()):
        if table not in _AUDIT_TABLES:
            digest.update(table.encode())
            for row in sorted(repr(r) for r in rows):
                digest.update(row.encode("utf-8", "backslashreplace"))
    return digest.hexdigest()


async def tool_probe(mem: Memory, url: str, name: Any, arguments: Any) -> str | None:
    """Call a tool through the dispatcher as a model would; a problem, or None."""
    tools = mem.tools.for_scope(SS)
    before = data_hash(url)
    try:
        result = await tools.call(name, arguments)
    except Exception as error:  # a tool call must answer, never raise
        return f"raised {type(error).__module__}.{type(error).__name__}: {error}"
    await mem.tools.flush()
    if result.error is not None and result.error.code == "internal_error":
        return f"internal_error: {result.error.message}"
    if not result.ok and data_hash(url) != before:
        return f"refused ({result.error.code if result.error else '?'}), but the data changed"
    return None


def tool_calls_for(rng: random.Random, count: int) -> list[tuple[Any, Any]]:
    """(name, arguments) pairs: each argument of each tool odd, missing, extra, of a wrong type, huge."""
    odd = [*ODD["text"], *ODD["int"], *ODD["float"], *ODD["wrong"]]
    calls: list[tuple[Any, Any]] = []
    for tool, argument, others in TOOL_ARGUMENTS:
        calls += [(tool, {**others, argument: value}) for value in rng.sample(odd, min(count, len(odd)))]
        calls += [(tool, others), (tool, {**others, argument: "x", "extra": 1}), (tool, {**others, "user": "v"})]
    calls += [(name, {}) for name in ["", "\ud800", "x" * 10_000, None, 7, "block_append "]]
    calls += [("fact_search", value) for value in ["query", ["query"], 7, b"{}", {1: "x"}, {"\ud800": 1}]]
    return calls


# -- security: another user's ids and adversarial scope ids over the tiers' read surfaces ---------


def marker(index: int) -> str:
    return f"zqtier{index:03d}"  # one token the tokenizers keep whole


async def write_everyone(mem: Memory, users: list[str]) -> dict[str, dict[str, str]]:
    """Each user: a block, a message, a procedure, a group sharing a fact, a concept, an accessed
    episode, a tool call; all carrying the user's marker. Their ids."""
    ids: dict[str, dict[str, str]] = {}
    for i, user in enumerate(users):
        mark, scope, session = marker(i), Scope(user=user, agent="a"), Scope(user=user, session="s", agent="a")
        block = await mem.working.define(scope, "notes", f"{mark} notes")
        message = await mem.session.push(session, Message("user", f"{mark} said hello"))
        procedure = await mem.procedural.define(scope, f"{mark} deploy", [f"{mark} build"], trigger=f"{mark} ship")
        group = await mem.shared.create(scope, f"{mark} team")
        fact = await mem.semantic.remember(scope, f"{mark} likes green tea")
        item = await mem.shared.attach(scope, group.name, fact_id=fact.id)
        episode = await mem.episodic.put(Episode(content=f"{mark} visited Kyoto", timestamp=T0), user=user,
                                         session="s", agent="a")  # fmt: skip
        await mem.concepts.consolidate(scope, [EventNode(text=f"{mark} green tea", record_id=episode.id)])
        await mem.lifecycle.access([episode])
        await mem.tools.for_scope(session).call("block_append", {"label": "notes", "text": f"{mark} more"})
        ids[user] = {"block": block.id, "message": message.id, "procedure": procedure.id, "group": group.id,
                     "group name": group.name, "fact": fact.id, "item": item.id, "episode": episode.id}  # fmt: skip
    await mem.tools.flush()
    await mem.consolidator.run("light")
    return ids


Read = Callable[[], Awaitable[object]]


def _reads(mem: Memory, user: str, foreign: dict[str, str]) -> dict[str, Read]:
    scope, session = Scope(user=user, agent="a"), Scope(user=user, session="s", agent="a")
    tools = mem.tools.for_scope(session)
    return {
        "working.list": lambda: mem.working.list(user),
        "working.compile": lambda: mem.working.compile(scope, 100_000),
        "session.list": lambda: mem.session.list(user, limit=1000, compacted=True),
        "session.search": lambda: mem.session.search(user, "said hello", 1000),
        "session.events": lambda: mem.session.events(user),
        "session.attributed_for": lambda: mem.session.attributed_for(user, "a"),
        "procedural.list": lambda: mem.procedural.list(user),
        "procedural.activate": lambda: mem.procedural.activate(scope, "deploy build ship zqtier", 1000),
        "shared.groups": lambda: mem.shared.groups(scope),
        "shared.list_for": lambda: mem.shared.list_for(scope),
        "shared.list_for another's group": lambda: mem.shared.list_for(scope, group=foreign["group name"]),
        "shared.attach another's fact": lambda: mem.shared.attach(
            scope, foreign["group name"], fact_id=foreign["fact"]
        ),
        "shared.detach another's item": lambda: mem.shared.detach(scope, foreign["group name"], foreign["item"]),
        "tools.calls": lambda: mem.tools.calls(user, limit=1000),
        "tool fact_search": lambda: tools.call("fact_search", {"query": "green tea zqtier", "k": 50}),
        "tool recall_episodes": lambda: tools.call("recall_episodes", {"query": "visited Kyoto", "k": 50}),
        "tool conversation_search": lambda: tools.call("conversation_search", {"query": "said hello", "k": 50}),
        "tool fact_supersede another's fact": lambda: tools.call(
            "fact_supersede", {"fact_id": foreign["fact"], "text": "mine now"}
        ),
        "tool fact_forget another's fact": lambda: tools.call("fact_forget", {"fact_id": foreign["fact"]}),
        "concepts.load_graph": lambda: mem.concepts.load_graph(scope),
        "concepts.versions": lambda: mem.concepts.versions(scope),
        "concepts.query": lambda: mem.concepts.query(scope, "green tea zqtier", 50),
        "consolidator.summaries": lambda: mem.consolidator.summaries(user),
        "consolidator.topic_episodes": lambda: mem.consolidator.topic_episodes(user),
        "lifecycle.stats": lambda: mem.lifecycle.stats(user),
        "lifecycle.search": lambda: mem.lifecycle.search(user, "visited Kyoto green tea", 50, record_access=False),
        "lifecycle.tiers of another's episode": lambda: mem.lifecycle.tiers("episode", [foreign["episode"]]),
    }


async def leaks_for(mem: Memory, users: list[str], ids: dict[str, dict[str, str]], user: str) -> list[str]:
    """Every read surface in ``user``'s scope; the other users' markers or ids it returned."""
    own = marker(users.index(user))
    foreign = next((v for u, v in ids.items() if u != user), ids[user])
    seen: list[str] = []
    for name, read in _reads(mem, user, foreign).items():
        try:
            answer = await read()
        except MnemoniteError as error:  # refusing another user's group or fact is the right answer
            answer = type(error).__name__
        text = repr(answer)
        if "another's" in name:  # a refusal may quote the id it was given; a success is the leak
            seen += [f"{name}: succeeded"] if getattr(answer, "ok", False) else []
            text = text.replace(foreign["fact"], "").replace(foreign["item"], "").replace(foreign["episode"], "")
        seen += [f"{name}: {m}" for m in set(re.findall(r"zqtier\d{3}", text)) if m != own]
        seen += [f"{name}: {u}'s {kind}" for u in users if u != user for kind, v in ids[u].items()
                 if kind != "group name" and v in text]  # fmt: skip
    return seen


async def stolen(mem: Memory, users: list[str], ids: dict[str, dict[str, str]]) -> list[str]:
    """Each user's records as they were written: a by-id write with another's id must have changed none."""
    problems = []
    for i, user in enumerate(users):
        scope = Scope(user=user, agent="a")
        fact = await mem.semantic.get(ids[user]["fact"])
        if fact.status != "active":
            problems.append(f"{user}'s fact is {fact.status}")
        shared = await mem.shared.list_for(scope)
        if [s.item_id for s in shared] != [ids[user]["fact"]]:
            problems.append(f"{user}'s group shares {[s.item_id for s in shared]}")
        if marker(i) not in (await mem.working.read(scope, "notes")).value:
            problems.append(f"{user}'s block lost its marker")
    return problems


# -- the driver's rows -------------------------------------------------------------------------

Row = dict[str, object]


async def _open(url: str) -> Memory:
    return await Memory.open(url, config=MemoryConfig(index_in_background=False))


async def _fuzz_row(backend: str, url: str, quick: bool) -> Row:
    rng, start, tries, failures = random.Random(11), time.perf_counter(), 0, 0
    mem = await _open(url)
    try:
        await seed(mem)
        for name, (kind, call) in CALLS.items():
            for value in values_for(kind, rng, 8 if quick else 40):
                tries += 1
                if (problem := await probe(mem, url, call, value)) is not None:
                    failures += 1
                    print(f"  {backend} {name} {value!r:.40}: {problem[:200]}", file=sys.stderr)
        for tool, arguments in tool_calls_for(rng, 3 if quick else 12):
            tries += 1
            if (problem := await tool_probe(mem, url, tool, arguments)) is not None:
                failures += 1
                print(f"  {backend} tool {tool!r:.30} {arguments!r:.60}: {problem[:200]}", file=sys.stderr)
    finally:
        await mem.close(finish_indexing=False)
        close_connections()
    return _row("fuzz: agent tiers, tools, consolidator, concepts, lifecycle", backend, tries, failures, 0, 0, start)


async def _security_row(backend: str, url: str, quick: bool) -> Row:
    from reliability_inputs import USERS

    start, users = time.perf_counter(), USERS[:6] if quick else USERS
    mem = await _open(url)
    try:
        ids = await write_everyone(mem, users)
        leaked = [leak for user in users for leak in await leaks_for(mem, users, ids, user)]
        failures = await stolen(mem, users, ids)
    finally:
        await mem.close(finish_indexing=False)
        close_connections()
    for problem in [*leaked, *failures]:
        print(f"  {backend} {problem}", file=sys.stderr)
    tries = len(users) * len(_reads(mem, users[0], ids[users[0]]))
    return _row("security: scope ids x tier, tool, concept reads", backend, tries, len(failures), 0, len(leaked), start)


def rows(backend: str, url: str, quick: bool) -> list[dict[str, object]]:
    """The rows of this module for one backend, on ``url`` (a fresh, empty memory)."""
    return [asyncio.run(_fuzz_row(backend, url, quick)), asyncio.run(_security_row(backend, url, quick))]
