"""The agent tiers' writes in the crash child's loop, and what the parent checks of them after each SIGKILL.

`reliability_crash.py` adds `OPERATIONS` to its child's loop, reads `READS` into its snapshot and runs
`WHOLE` (an acknowledged operation is whole), `partial` (the operation in flight is whole or absent) and
`invariants` (what must hold whatever was killed) with its own checks. The writes: working blocks
(define, append, patch, write; the block and its logged event in one transaction), session messages (push,
flush of the important ones to episodes, compaction), procedures (define, activate, remove), shared groups
(create, share a fact), tool calls through the dispatcher (their audit flushed before they are
acknowledged), each consolidator phase, concept consolidation and lifecycle accesses and sweeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

from mnemonite import Scope

USER, SESSION, AGENT, PURGED = "crash", "s", "a", "p"
WORDS = "tea coffee cats dogs chess piano jazz opera tennis".split()
CITIES = "Paris Berlin Oslo Riga".split()


def say(**line: Any) -> None:
    """One journal line on stdout, flushed (as `reliability_crash.say`)."""
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def _scope(session: bool = True) -> Scope:
    return Scope(user=USER, session=SESSION if session else None, agent=AGENT)


# -- the child's writes ------------------------------------------------------------------------


async def _blocks(mem: Any, rng: random.Random, tag: str) -> None:
    """A new block, then an append, a patch and a rewrite of it, each acknowledged with its value."""
    scope, label, word = _scope(), f"b{tag}", rng.choice(WORDS)
    steps: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        ("define", lambda: mem.working.define(scope, label, f"{tag} likes {word}")),
        ("append", lambda: mem.working.append(scope, label, f"{tag} and {word}")),
        ("patch", lambda: mem.working.patch(scope, label, f"{tag} and", f"{tag} or")),
        ("write", lambda: mem.working.write(scope, label, f"{tag} rewritten")),
    ]
    for step, run in steps[: rng.randint(1, 4)]:
        say(begin="block", step=step, label=label)
        block = await run()
        say(done="block", step=step, label=label, value=block.value)


async def _messages(mem: Any, rng: random.Random, tag: str) -> None:
    from mnemonite import Message

    said = [f"I like {rng.choice(WORDS)}", f"I live in {rng.choice(CITIES)}", f"I play {rng.choice(WORDS)} daily"]
    messages = [Message("user", text, id=f"m{tag}-{j}", important=j == 0) for j, text in enumerate(said)]
    ids = [m.id for m in messages]
    say(begin="push", ids=ids)
    await mem.session.push_many(_scope(), messages)
    say(done="push", ids=ids)


async def _flush(mem: Any, rng: random.Random, tag: str) -> None:
    say(begin="flush")
    made = await mem.session.flush_important(_scope())
    say(done="flush", ids=[e.id for e in made])


async def _compact(mem: Any, rng: random.Random, tag: str) -> None:
    say(begin="compact")
    summary = await mem.session.compact(_scope(), keep_last=rng.randint(2, 6))
    say(done="compact", summary=summary.id if summary else None)


async def _procedures(mem: Any, rng: random.Random, tag: str) -> None:
    name = f"p{tag}"
    say(begin="procedure", name=name)
    await mem.procedural.define(_scope(), name, [f"boil {rng.choice(WORDS)}", "serve"], trigger="make tea")
    say(done="procedure", name=name)
    await mem.procedural.activate(_scope(), "make tea")
    known = [p.name for p in await mem.procedural.list(_scope(False))]
    if len(known) > 3:
        victim = rng.choice(known)
        say(begin="unprocedure", name=victim)
        await mem.procedural.remove(_scope(), victim)
        say(done="unprocedure", name=victim)


async def _groups(mem: Any, rng: random.Random, tag: str) -> None:
    from mnemonite import Scope

    name = f"g{tag}"
    say(begin="group", name=name)
    group = await mem.shared.create(_scope(), name)
    say(done="group", name=name, group=group.id)
    fact = await mem.semantic.remember(Scope(user=USER, agent=AGENT), f"{tag} the team likes {rng.choice(WORDS)}")
    say(begin="share", group=group.id, fact=fact.id)
    item = await mem.shared.attach(_scope(), name, fact_id=fact.id)
    say(done="share", group=group.id, fact=fact.id, item=item.id)


async def _tools(mem: Any, rng: random.Random, tag: str) -> None:
    tools = mem.tools.for_scope(_scope())
    name, arguments = rng.choice([
        ("fact_remember", {"text": f"{tag} I enjoy {rng.choice(WORDS)}"}),
        ("block_append", {"label": "tool-notes", "text": f"{tag} noted"}),
        ("fact_search", {"query": rng.choice(WORDS)}),
        ("recall_episodes", {"query": rng.choice(WORDS)}),
    ])  # fmt: skip
    if name == "block_append" and not await mem.working.list(_scope(False)):
        await mem.working.define(_scope(), "tool-notes", "", limit=1_000_000)
    say(begin="tool", tool=name)
    result = await tools.call(name, arguments)
    await mem.tools.flush()
    say(done="tool", tool=name, call=result.call_id, ok=result.ok, output=result.output)


async def _consolidator(mem: Any, rng: random.Random, tag: str) -> None:
    phase = rng.choice(["light", "standard", "deep"])
    say(begin="consolidator", phase=phase)
    await mem.consolidator.run(phase)
    say(done="consolidator", phase=phase)


async def _concepts(mem: Any, rng: random.Random, tag: str) -> None:
    from mnemonite.models.concepts import EventNode

    events = [EventNode(text=f"{rng.choice(WORDS)} and {rng.choice(WORDS)} talk {tag}") for _ in range(2)]
    say(begin="concepts")
    version = await mem.concepts.consolidate(_scope(), events)
    say(done="concepts", version=version.version if version else None)


async def _lifecycle(mem: Any, rng: random.Random, tag: str) -> None:
    episodes = await mem.episodic.recent(USER, limit=10)
    if episodes:
        await mem.lifecycle.access(rng.sample(episodes, min(3, len(episodes))))
    await mem.lifecycle.sweep(USER)


async def writer_extras(mem: Any, name: str, batch: int) -> None:
    """What a concurrency writer adds to each batch: session messages, and a topic into the shared concept graph."""
    from mnemonite import Message
    from mnemonite.models.concepts import EventNode

    scope = Scope(user=USER, session=name, agent=AGENT)
    said = [Message("user", f"I live in {CITIES[batch % 4]}", id=f"m{name}-{batch}-0"),
            Message("user", f"I like {WORDS[batch % 9]}", id=f"m{name}-{batch}-1")]  # fmt: skip
    await mem.session.push_many(scope, said)
    say(done="push", ids=[m.id for m in said])
    version = await mem.concepts.consolidate(scope, [EventNode(text=f"{name} talks about {WORDS[batch % 9]}")])
    say(done="concepts", version=version.version if version else None)


async def worker_child(opening: Awaitable[Any], stop: Path) -> None:
    """A consolidator worker: every phase in a loop until the file ``stop`` exists, then each once more."""
    mem = await opening
    while not os.path.exists(stop):  # noqa: ASYNC240  (a stat per loop)
        for report in await mem.consolidator.run():
            say(done="consolidator", phase=report.phase)
        await asyncio.sleep(0.02)
    for phase in ("light", "standard", "deep"):
        await mem.consolidator.run(phase)
    await mem.close()


async def concepts_child(opening: Awaitable[Any], stop: Path) -> None:
    """Concept consolidation of the writers' (user, agent) graph in a loop until the file ``stop`` exists."""
    from mnemonite.models.concepts import EventNode

    mem, n = await opening, 0
    while not os.path.exists(stop):  # noqa: ASYNC240  (a stat per loop)
        n += 1
        version = await mem.concepts.consolidate(_scope(), [EventNode(text=f"{WORDS[n % 9]} and {CITIES[n % 4]}")])
        say(done="concepts", version=version.version if version else None)
        await asyncio.sleep(0.02)
    await mem.close()


Operation = Callable[[Any, random.Random, str], Awaitable[None]]
OPERATIONS: dict[Operation, int] = {_blocks: 2, _messages: 3, _flush: 1, _compact: 1, _procedures: 1, _groups: 1,
                                    _tools: 3, _consolidator: 2, _concepts: 1, _lifecycle: 1}  # fmt: skip


# -- what the parent reads and checks ----------------------------------------------------------

READS = {
    "blocks": "SELECT id, label, value FROM blocks",
    "block_events": "SELECT seq, name, payload FROM session_events WHERE kind = 'memory_write'"
    " AND name LIKE 'working.%' ORDER BY seq",
    "messages": "SELECT id, compacted_into, metadata FROM session_messages",
    "procedures": "SELECT name FROM procedures",
    "groups": "SELECT g.id, (SELECT COUNT(*) FROM group_members m WHERE m.group_id = g.id AND m.role = 'owner')"
    " FROM agent_groups g",
    "shared": "SELECT id, item_id FROM shared_items",
    "tool_calls": "SELECT id, tool, outcome, result FROM tool_calls",
    "topics": "SELECT scope_key, turn_ids FROM consolidator_episodes",
    "jobs": "SELECT phase, scope_key, session_id, checkpoint, upto, summary FROM consolidator_jobs",
    "episode_seqs": "SELECT id, seq, scope_key FROM episodes",
    "message_seqs": "SELECT id, seq, user_id, session_id, agent_id FROM session_messages",
    "standard_facts": "SELECT f.id, f.text, s.episode_id FROM facts f JOIN fact_sources s ON s.fact_id = f.id"
    " WHERE f.rule_id = 'consolidator.standard' AND f.status IN ('active', 'pending')",
    "concept_graphs": "SELECT user_id, agent_id, version FROM concept_graphs",
    "concept_versions": "SELECT user_id, agent_id, version FROM concept_versions",
    "concept_nodes": "SELECT id, first_version, last_version, user_id, agent_id FROM concept_nodes",
    "record_tiers": "SELECT kind, record_id FROM record_tiers",
}

Tiers = dict[str, list[Any]]
Check = Callable[[dict[str, Any], Any], bool]


def _rows(memory: Any, name: str) -> list[Any]:
    return list(memory.tiers.get(name, []))


def _kept_fact(fact: str, memory: Any) -> bool:
    return fact in memory.facts or fact in memory.purged_facts


def _messages(memory: Any) -> set[str]:
    return {r[0] for r in _rows(memory, "messages")}


def _block_value(line: dict[str, Any], memory: Any) -> bool:
    """The block has this value, or a later acknowledged step's (checked by that step's line)."""
    return any(r[1] == line["label"] for r in _rows(memory, "blocks"))


def _tool_whole(line: dict[str, Any], memory: Any) -> bool:
    if line["call"] not in {r[0] for r in _rows(memory, "tool_calls")}:
        return False
    if line["ok"] and line["tool"] == "fact_remember":
        return _kept_fact(line["output"]["fact_id"], memory)
    return True


WHOLE: dict[str, Check] = {
    "block": _block_value,
    "push": lambda line, m: all(i in _messages(m) or i in m.episodes or i in m.purged for i in line["ids"]),
    "flush": lambda line, m: all(i in m.episodes or i in m.purged for i in line["ids"]),
    "compact": lambda line, m: line["summary"] is None or line["summary"] in _messages(m),
    "group": lambda line, m: line["group"] in {r[0] for r in _rows(m, "groups")},
    "share": lambda line, m: line["item"] in {r[0] for r in _rows(m, "shared")} or line["fact"] in m.purged_facts,
    "tool": _tool_whole,
    "concepts": lambda line, m: (
        line["version"] is None or (USER, AGENT, line["version"]) in {tuple(r) for r in _rows(m, "concept_versions")}
    ),
}


def partial(journal: Any, memory: Any) -> list[str]:
    """Tier operations in flight at a kill that left part of themselves behind."""
    problems = []
    for line in journal.in_flight:
        if line["begin"] == "push":
            present = [i in _messages(memory) for i in line["ids"]]
            if any(present) and not all(present):
                problems.append(f"partial push: {sum(present)} of {len(present)} messages of {line['ids'][0]}")
    return problems


def invariants(journal: Any, memory: Any) -> list[str]:
    """What holds after any kill: each tier's rows agree with each other and with the journal."""
    return (
        _block_problems(journal, memory) + _compaction_problems(memory) + _procedure_problems(journal, memory)
        + _group_problems(memory) + _audit_problems(memory) + _consolidator_problems(memory)
        + _concept_problems(journal, memory) + _lifecycle_problems(memory)
    )  # fmt: skip


def _block_problems(journal: Any, memory: Any) -> list[str]:
    """Each block holds its last acknowledged value (or the value of a step in flight after it), and the
    latest write event logged for it carries its value: block and log were written together."""
    values = {r[1]: r[2] for r in _rows(memory, "blocks")}
    expected: dict[str, set[str]] = {}
    for line in journal.acked:
        if line.get("done") == "block":
            expected[line["label"]] = {line["value"]}
    flying = {line["label"] for line in journal.in_flight if line["begin"] == "block"}
    problems = [f"block {label}: {values.get(label)!r}, acknowledged {sorted(want)}" for label, want in expected.items()
                if values.get(label) not in want and label not in flying]  # fmt: skip
    logged: dict[str, str] = {}
    for _, _, payload in _rows(memory, "block_events"):
        block = orjson.loads(payload).get("block", {})
        logged[block.get("id")] = block.get("value")
    by_id = {r[0]: r[2] for r in _rows(memory, "blocks")}
    problems += [f"block {i}: value {v!r} but its log says {logged.get(i)!r}" for i, v in by_id.items()
                 if i in logged and logged[i] != v]  # fmt: skip
    return problems


def _compaction_problems(memory: Any) -> list[str]:
    """A summary and the turns it replaced were written together."""
    rows = _rows(memory, "messages")
    ids = {r[0] for r in rows}
    problems = [f"message {r[0]} compacted into a missing summary {r[1]}" for r in rows if r[1] and r[1] not in ids]
    into = {r[0]: r[1] for r in rows}
    for message_id, _, metadata in rows:
        for turn in orjson.loads(metadata or "{}").get("summary_of", []):
            if turn in into and into[turn] != message_id:
                problems.append(f"summary {message_id} lists {turn}, which is compacted into {into[turn]}")
    return problems


def _procedure_problems(journal: Any, memory: Any) -> list[str]:
    state: dict[str, bool] = {}
    for line in journal.acked:
        if line.get("done") in ("procedure", "unprocedure"):
            state[line["name"]] = line["done"] == "procedure"
    flying = {line["name"] for line in journal.in_flight if line["begin"] in ("procedure", "unprocedure")}
    present = {r[0] for r in _rows(memory, "procedures")}
    return [f"procedure {name} {'lost' if there else 'back after its removal'}" for name, there in state.items()
            if (name in present) != there and name not in flying]  # fmt: skip


def _group_problems(memory: Any) -> list[str]:
    return [f"group {r[0]} has no owner (half a create)" for r in _rows(memory, "groups") if int(r[1]) < 1]


def _audit_problems(memory: Any) -> list[str]:
    """Each audited fact_remember that succeeded left its fact (or a purge took it)."""
    problems = []
    for call, tool, outcome, result in _rows(memory, "tool_calls"):
        fact = orjson.loads(result).get("fact_id") if tool == "fact_remember" and outcome == "ok" else None
        if fact is not None and not _kept_fact(fact, memory):
            problems.append(f"tool call {call} remembered {fact}, which is missing")
    return problems


def _consolidator_problems(memory: Any) -> list[str]:
    """No turn in two topic episodes (promoted twice), none at or below a standard job's checkpoint left out
    (skipped), no statement of a turn admitted twice, a light job's checkpoint never without its summary."""
    problems: list[str] = []
    covered: dict[tuple[str, str], bool] = {}
    for scope_key, turn_ids in _rows(memory, "topics"):
        for turn in orjson.loads(turn_ids):
            if (scope_key, turn) in covered:
                problems.append(f"turn {turn} of {scope_key} is in two topic episodes")
            covered[(scope_key, turn)] = True
    from mnemonite.scope import episode_key

    turns: dict[str, dict[str, int]] = {}
    for turn, seq, key in _rows(memory, "episode_seqs"):
        turns.setdefault(key, {})[turn] = int(seq)
    for turn, seq, user, session, agent in _rows(memory, "message_seqs"):
        turns.setdefault("msg:" + episode_key(user, session, agent), {})[turn] = int(seq)
    for phase, scope_key, _, checkpoint, _, summary in _rows(memory, "jobs"):
        if f"/session/{PURGED}/" in scope_key:
            continue  # a purge there dropped its topic episodes and summary, on purpose
        if phase == "light" and int(checkpoint) > 0 and summary is None:
            problems.append(f"light job {scope_key} moved its checkpoint without a summary")
        if phase == "standard":
            problems += [f"turn {i} (seq {seq}) of {scope_key} skipped: checkpoint {checkpoint}, no topic episode"
                         for i, seq in turns.get(scope_key, {}).items()
                         if seq <= int(checkpoint) and (scope_key, i) not in covered]  # fmt: skip
    pairs = [(r[1], r[2]) for r in _rows(memory, "standard_facts")]
    problems += [f"statement {text!r} of {turn} admitted twice" for text, turn in set(pairs)
                 if pairs.count((text, turn)) > 1]  # fmt: skip
    return problems


def _concept_problems(journal: Any, memory: Any) -> list[str]:
    """Each graph's versions are 1..N with no gap or repeat, N is the graph's version, nodes within it, and
    no two acknowledged consolidations got the same version."""
    acked = [line["version"] for line in journal.acked if line.get("done") == "concepts" and line["version"]]
    problems = [f"concept graph version {v} acknowledged {acked.count(v)} times" for v in set(acked)
                if acked.count(v) > 1]  # fmt: skip
    versions: dict[tuple[str, str], list[int]] = {}
    for user, agent, version in _rows(memory, "concept_versions"):
        versions.setdefault((user, agent), []).append(int(version))
    graphs = {(r[0], r[1]): int(r[2]) for r in _rows(memory, "concept_graphs")}
    for owner, found in versions.items():
        if sorted(found) != list(range(1, len(found) + 1)) or graphs.get(owner) != len(found):
            problems.append(f"concept graph {owner}: versions {sorted(found)[-5:]}, graph at {graphs.get(owner)}")
    for node, first, last, user, agent in _rows(memory, "concept_nodes"):
        if not 1 <= int(first) <= int(last) <= graphs.get((user, agent), 0):
            problems.append(f"concept node {node}: versions {first}..{last} outside the graph's")
    return problems


def undone(memory: Any) -> list[str]:
    """Consolidator jobs left short of their end after every worker finished (concurrency's last check)."""
    return [f"{phase} job {key} stopped at {checkpoint} of {upto}" for phase, key, _, checkpoint, upto, _
            in _rows(memory, "jobs") if int(checkpoint) < int(upto)]  # fmt: skip


def _lifecycle_problems(memory: Any) -> list[str]:
    facts = memory.facts.keys()
    return [f"lifecycle row of a missing {kind} {record}" for kind, record in _rows(memory, "record_tiers")
            if record not in (memory.episodes if kind == "episode" else facts)]  # fmt: skip
