"""Crash injection and concurrency on one memory: SIGKILLed writers, and many processes writing at once.

Run through the driver, which gives each check a fresh memory per backend::

    python bench/reliability.py --quick

**Crash injection.** A child process runs every kind of write in a loop — ``put_many`` batches,
rule consolidation, ``remember``, ``supersede``, ``forget``, graph writes (entities, then an edge;
``graph.consolidate``; salience touches and decay), ``apply_deltas`` batches, episode and fact purges,
the indexer's vectors — printing a line before each operation (what it is about to write) and one
after it returns (committed). The parent SIGKILLs it at a random moment, then checks the memory against that journal:
every acknowledged operation whole (its episodes, fact, supersede with its lineage, forget, entities,
edge, purge; a fact purged later on counts as kept), the operation in flight whole or absent (no
partial batch), the integrity checks clean (SQLite ``PRAGMA integrity_check`` and
``foreign_key_check``; PostgreSQL ``amcheck`` on every btree index, rows included, where the server
has the extension), the rule's checkpoint consistent (every episode up to it promoted exactly once,
none after it), and the delta log and the facts in agreement (every applied delta's fact exists,
every fact has its delta, every closed fact is superseded and every superseded fact was closed by a
delta; purged facts excepted). The memory grows across kills.

**Concurrency.** Eight writer processes (``put_many`` batches, ``remember``, ``supersede``), a process running
the rule in a loop, and searchers (``search`` and ``recent``), all on one memory: afterwards every
acknowledged episode and fact is there once, every episode was promoted exactly once, and no process
raised anything (a typed `MnemoniteError` counts as a failure too: nothing here should fail).

The children embed with a hashed bag of words (`HashEmbedder`): the vectors travel the same write
paths as the packaged model's. They are forked from a helper process that imported mnemonite once,
so a child starts in milliseconds and hundreds of kills fit in minutes. ``MNEMONITE_CRASH_KILLS``
sets the number of kills per backend of the long run (default 200).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reliability_crash_tiers as tiers

RULE_ID = "crash"
USER, SESSION, AGENT = "crash", "s", "a"
PURGED = "p"  # the session whose episodes are purged (a purge drops its topic episodes and summary on purpose)
BATCH = 5
WORDS = "tea coffee paris berlin oslo riga cats dogs chess piano rust python jazz opera tennis".split()


# -- the children ------------------------------------------------------------------------------


class HashEmbedder:
    """A deterministic 64-dimension bag-of-words embedder: fast to start, same write paths as a model."""

    model, dimensions = "crash-hash-64", 64

    async def embed(self, text: str) -> Any:
        return (await self.embed_batch([text]))[0]

    async def embed_batch(self, texts: Sequence[str]) -> Any:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, hashlib.blake2b(word.encode(), digest_size=2).digest()[0] % self.dimensions] += 1.0
        out[:, 0] += 1e-3  # never the zero vector
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def say(**line: Any) -> None:
    """One journal line on stdout, flushed: once written, a SIGKILL cannot take it back."""
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


async def _open(url: str, lease: float = 0.5) -> Any:
    from mnemonite import ConsolidationRule, ConsolidatorConfig, Memory, MemoryConfig

    # A short lease (crash lives): a job whose worker was killed is taken over, from its checkpoint, by the
    # next life. Processes that run at once keep the default: a lease shorter than a job would be lost mid-job.
    config = MemoryConfig(consolidator=ConsolidatorConfig(lease_seconds=lease))
    mem = await Memory.open(url, embedder=HashEmbedder(), config=config)
    await mem.add_rule(ConsolidationRule(id=RULE_ID, cadence={"every": 1}))
    return mem


async def _put_many(mem: Any, rng: random.Random, tag: str) -> None:
    from mnemonite import Episode

    ids = [f"{tag}-{j}" for j in range(BATCH)]
    meta = {"subject": "crash", "predicate": f"likes {rng.randrange(4)}", "object": rng.choice(WORDS)}
    episodes = [Episode(id=i, content=f"{i} says {rng.choice(WORDS)}", metadata=meta if j else {})
                for j, i in enumerate(ids)]  # fmt: skip
    say(begin="put_many", ids=ids)
    await mem.episodic.put_many(episodes, user=USER, session=rng.choice([SESSION, PURGED]), agent=AGENT)
    say(done="put_many", ids=ids)


async def _consolidate(mem: Any, rng: random.Random, tag: str) -> None:
    say(begin="consolidate")
    await mem.consolidate(RULE_ID)
    say(done="consolidate")


async def _remember(mem: Any, rng: random.Random, tag: str) -> None:
    from mnemonite import Scope

    say(begin="remember")
    decision = await mem.semantic.remember_with_decision(Scope(user=USER, agent=AGENT), f"{tag} {rng.choice(WORDS)}")
    say(done="remember", fact=decision.fact_id)


async def _current(mem: Any, rng: random.Random) -> str | None:
    from mnemonite import Scope

    facts = [f for f in await mem.semantic.facts(Scope(user=USER, agent=AGENT), limit=50) if f.status == "active"]
    return rng.choice(facts).id if facts else None


async def _supersede(mem: Any, rng: random.Random, tag: str) -> None:
    old = await _current(mem, rng)
    if old is not None:
        say(begin="supersede", old=old)
        new = await mem.semantic.supersede(old, f"{tag} now {rng.choice(WORDS)}")
        say(done="supersede", old=old, new=new.id)


async def _forget(mem: Any, rng: random.Random, tag: str) -> None:
    fact = await _current(mem, rng)
    if fact is not None:
        say(begin="forget", fact=fact)
        await mem.semantic.forget(fact)
        say(done="forget", fact=fact)


async def _graph(mem: Any, rng: random.Random, tag: str) -> None:
    from mnemonite import Scope

    scope, names = Scope(user=USER, agent=AGENT), [f"{tag}-a", f"{tag}-b"]
    say(begin="entities", names=names)
    made = await mem.graph.create_entities(scope, [{"name": n, "entity_type": "thing"} for n in names])
    say(done="entities", names=names)
    say(begin="relate", source=made[0].id, target=made[1].id)
    await mem.graph.relate(scope, source=made[0].id, target=made[1].id, relation="NEXT_TO")
    say(done="relate", source=made[0].id, target=made[1].id)


async def _purge(mem: Any, rng: random.Random, tag: str) -> None:
    episodes = await mem.episodic.recent(USER, PURGED, AGENT, limit=20)
    if episodes:
        victim = rng.choice(episodes).id
        say(begin="purge", episode=victim)
        await mem.episodic.purge(victim, reason="crash test")
        say(done="purge", episode=victim)


async def _apply_deltas(mem: Any, rng: random.Random, tag: str) -> None:
    from mnemonite import AddDelta
    from mnemonite._time import utcnow

    deltas = [AddDelta(fact_payload={"text": f"{tag}-{j} {rng.choice(WORDS)}", "user": USER, "agent": AGENT},
                       source_episode_ids=[], rule_id="import", confidence=1.0, promotion_ts=utcnow())
              for j in range(3)]  # fmt: skip
    ids = [d.delta_id for d in deltas]
    say(begin="apply_deltas", deltas=ids)
    await mem.semantic.apply_deltas(deltas)
    say(done="apply_deltas", deltas=ids)


async def _purge_fact(mem: Any, rng: random.Random, tag: str) -> None:
    fact = await _current(mem, rng)
    if fact is not None:
        say(begin="purge_fact", fact=fact)
        await mem.semantic.purge(fact, reason="crash test")
        say(done="purge_fact", fact=fact)


async def _consolidate_facts(mem: Any, rng: random.Random, tag: str) -> None:
    first, second = await _current(mem, rng), await _current(mem, rng)
    if first is not None and second is not None:
        say(begin="consolidate_facts", sources=[first, second])
        made = await mem.graph.consolidate([first, second], f"{tag} both {rng.choice(WORDS)}")
        say(done="consolidate_facts", sources=[first, second], fact=made.id)


async def _salience(mem: Any, rng: random.Random, tag: str) -> None:
    from mnemonite import Scope

    fact = await _current(mem, rng)
    if fact is not None:
        await mem.graph.touch([fact])
    await mem.graph.decay_all(Scope(user=USER, agent=AGENT), 0.99)


async def _index(mem: Any, rng: random.Random, tag: str) -> None:
    await mem.index()


Operation = Callable[[Any, random.Random, str], Awaitable[None]]
OPERATIONS: dict[Operation, int] = {_put_many: 6, _consolidate: 3, _remember: 3, _supersede: 2, _forget: 1,
                                    _graph: 2, _purge: 1, _apply_deltas: 1, _purge_fact: 1, _consolidate_facts: 1,
                                    _salience: 1, _index: 1} | tiers.OPERATIONS  # fmt: skip


async def crash_child(url: str, run: int, seed: int) -> None:
    """Write forever (until killed): every kind of write, chosen at random, each announced and acknowledged."""
    rng = random.Random(seed)
    mem = await _open(url)
    say(ready=run)
    operations, weights = list(OPERATIONS), list(OPERATIONS.values())
    for n in range(1, 1_000_000):
        await rng.choices(operations, weights)[0](mem, rng, f"r{run}-{n}")


async def writer_child(url: str, name: str, batches: int) -> None:
    """A concurrency writer: ``batches`` put_many batches, each followed by one remember, which supersedes
    the writer's fact of the batch before."""
    from mnemonite import Episode, Scope

    mem = await _open(url, lease=300.0)
    previous: str | None = None
    for b in range(batches):
        ids = [f"{name}-{b}-{j}" for j in range(BATCH)]
        await mem.episodic.put_many([Episode(id=i, content=f"{i} said hello") for i in ids],
                                    user=USER, session=name, agent=AGENT)  # fmt: skip
        say(done="put_many", ids=ids)
        decision = await mem.semantic.remember_with_decision(Scope(user=USER, agent=AGENT), f"{name} fact {b}")
        say(done="remember", fact=decision.fact_id)
        if previous is not None:
            new = await mem.semantic.supersede(previous, f"{name} fact {b - 1} revised")
            say(done="supersede", old=previous, new=new.id)
        previous = decision.fact_id
        await tiers.writer_extras(mem, name, b)
    await mem.close()


async def consolidator_child(url: str, stop: Path) -> None:
    """Run the rule in a loop until the file ``stop`` exists, then once more."""
    mem = await _open(url, lease=300.0)
    while not os.path.exists(stop):  # noqa: ASYNC240  (a stat per loop)
        run = await mem.consolidate(RULE_ID)
        say(done="consolidate", deltas=len(run.deltas))
        await asyncio.sleep(0.02)  # a loop, not a siege: the writers get the write lock between runs
    await mem.consolidate(RULE_ID)
    await mem.close()


async def searcher_child(url: str, stop: Path) -> None:
    """Search and read recent episodes in a loop until the file ``stop`` exists."""
    from mnemonite import Scope

    mem = await _open(url, lease=300.0)
    while not os.path.exists(stop):  # noqa: ASYNC240  (a stat per loop)
        await mem.search(Scope(user=USER), random.choice(WORDS) + " hello", k=5)
        await mem.episodic.recent(USER, limit=20)
        say(done="search")
        await asyncio.sleep(0.02)
    await mem.close()


def fleet(url: str, writers: int, batches: int, searchers: int, folder: Path) -> None:
    """Fork every concurrency child from this process, which imported mnemonite once: a child starts in
    milliseconds, not in the 0.8 s an interpreter takes to import it. Each child's stdout and stderr go to
    ``folder/<name>.out`` and ``.err``; the exit codes to ``folder/codes.json``."""
    import mnemonite.memory  # noqa: F401  (before the forks, and before any thread exists)

    stop = folder / "stop"
    loops: dict[str, Callable[[], Awaitable[None]]] = {"consolidator": lambda: consolidator_child(url, stop)}
    loops |= {f"s{i}": lambda: searcher_child(url, stop) for i in range(searchers)}
    loops |= {"worker": lambda: tiers.worker_child(_open(url, 300.0), stop),
              "concepts": lambda: tiers.concepts_child(_open(url, 300.0), stop)}  # fmt: skip
    jobs = {f"w{i}": (lambda i=i: writer_child(url, f"w{i}", batches)) for i in range(writers)}  # type: ignore[misc]
    pids = {name: _fork(job, folder / name) for name, job in {**loops, **jobs}.items()}
    codes = {name: _reap(pids[name]) for name in jobs}
    stop.touch()
    codes |= {name: _reap(pids[name]) for name in loops}
    (folder / "codes.json").write_text(json.dumps(codes))


def _fork(job: Callable[[], Awaitable[None]], path: Path) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        with path.with_suffix(".out").open("w") as out, path.with_suffix(".err").open("w") as err:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
        asyncio.run(job())  # type: ignore[arg-type]
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _reap(pid: int) -> int:
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


# -- the journal and the checks ----------------------------------------------------------------


@dataclass
class Journal:
    """What the children announced (``begin``) and acknowledged (``done``), across every kill."""

    acked: list[dict[str, Any]] = field(default_factory=list)
    in_flight: list[dict[str, Any]] = field(default_factory=list)

    def read(self, lines: Sequence[str]) -> None:
        """The lines of one child's life: its last ``begin`` without a ``done`` is the operation in flight."""
        pending: dict[str, Any] | None = None
        for text in lines:
            line = json.loads(text)
            if "begin" in line:
                pending = line
            elif "done" in line:
                self.acked.append(line)
                pending = None
        if pending is not None:
            self.in_flight.append(pending)


@dataclass
class Snapshot:
    """The rows the checks read, from one consistent state of the memory."""

    episodes: dict[str, int]
    facts: dict[str, tuple[str, str | None]]
    lineage: set[tuple[str, str, str]]
    deltas: list[tuple[str, str, str | None, str | None, str, str | None]]
    checkpoint: int
    entities: set[str]
    edges: set[tuple[str, str]]
    purged: set[str]
    integrity: str
    purged_facts: set[str] = field(default_factory=set)
    applied: set[str] = field(default_factory=set)
    tiers: dict[str, list[Any]] = field(default_factory=dict)  # the rows of `tiers.READS`


async def read_memory(url: str) -> Snapshot:
    """Every row the checks need, read in one snapshot, and the store's deep integrity check."""
    from mnemonite.store import open_store

    store = await open_store(url, create=False)
    try:
        health = await store.health(deep=True)  # PostgreSQL: creates amcheck where the server has it
        async with store.snapshot() as db:  # type: ignore[attr-defined]
            read = {name: await _rows(db, sql) for name, sql in (_READS | tiers.READS).items()}
            integrity = await _integrity(db, url, health.integrity or "")
    finally:
        await store.close()
    return Snapshot(
        episodes={r[0]: int(r[1]) for r in read["episodes"]},
        facts={r[0]: (r[1], r[2]) for r in read["facts"]},
        lineage={(r[0], r[1], r[2]) for r in read["lineage"]},
        deltas=[tuple(r) for r in read["deltas"]],
        checkpoint=int(read["checkpoint"][0][0]) if read["checkpoint"] else 0,
        entities={r[0] for r in read["entities"]},
        edges={(r[0], r[1]) for r in read["edges"]},
        purged={i for r in read["purged"] for i in json.loads(r[0] or "[]")},
        purged_facts={i for r in read["purged_facts"] for i in json.loads(r[0] or "[]")},
        integrity=integrity,
        applied={r[0] for r in read["applied"]},
        tiers={name: read[name] for name in tiers.READS},
    )


async def _integrity(db: Any, url: str, health: str) -> str:
    """SQLite: ``PRAGMA integrity_check`` and ``foreign_key_check``; PostgreSQL: amcheck on every btree index
    of the memory's tables, their rows included (``heapallindexed``), where the server has amcheck."""
    if url.startswith("sqlite"):
        found = [str(r[0]) for r in await _rows(db, "PRAGMA integrity_check") if r[0] != "ok"]
        found += [f"foreign key: {tuple(r)}" for r in await _rows(db, "PRAGMA foreign_key_check")]
        return "; ".join(found[:3]) or "ok"
    if health.startswith("not checked"):
        return health
    await _rows(db, _ALL_BTREES)  # raises (a StoreError) on the first index that does not match its table
    return "ok"


_ALL_BTREES = (
    "SELECT bt_index_check(c.oid, true) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
    " JOIN pg_am a ON a.oid = c.relam JOIN pg_class t ON t.oid = i.indrelid"
    " WHERE a.amname = 'btree' AND t.relnamespace = current_schema()::regnamespace"
)


_READS = {
    "episodes": "SELECT id, seq FROM episodes",
    "facts": "SELECT id, status, superseded_at FROM facts",
    "lineage": "SELECT new_id, old_id, relation FROM lineage",
    "deltas": "SELECT rule_id, body, applied_at, fact_id, closed_fact_ids, rejected_at FROM delta_log",
    "checkpoint": f"SELECT checkpoint FROM rules WHERE id = '{RULE_ID}'",
    "entities": "SELECT name FROM entities",
    "edges": "SELECT source_id, target_id FROM edges",
    "purged": "SELECT episode_ids FROM purges",
    "purged_facts": "SELECT fact_ids FROM purges",
    "applied": "SELECT delta_id FROM delta_log WHERE applied_at IS NOT NULL",
}


async def _rows(db: Any, sql: str) -> list[Any]:
    cursor = await db.execute(sql)
    return list(await cursor.fetchall())


def integrity_problems(memory: Snapshot) -> list[str]:
    """The deep integrity check; a server without amcheck is reported by the row, not failed."""
    if memory.integrity == "ok" or memory.integrity.startswith("not checked"):
        return []
    return [f"integrity check: {memory.integrity}"]


def lost(journal: Journal, memory: Snapshot) -> list[str]:
    """Acknowledged operations that are not whole in the memory."""
    problems: list[str] = []
    for line in journal.acked:
        problems += [f"acknowledged {line['done']} not whole: {line}" for _ in range(not _whole(line, memory))]
    return problems


def _whole(line: dict[str, Any], memory: Snapshot) -> bool:
    check = (_WHOLE | tiers.WHOLE).get(line.get("done") or line.get("begin") or "")
    return True if check is None else check(line, memory)


def _kept(fact: str, memory: Snapshot) -> bool:
    """The fact is there, or a purge later on took it, on purpose."""
    return fact in memory.facts or fact in memory.purged_facts


def _whole_supersede(line: dict[str, Any], memory: Snapshot) -> bool:
    if {line["old"], line["new"]} & memory.purged_facts:
        return True
    closed = memory.facts.get(line["old"], ("", None))[1] is not None
    return closed and (line["new"], line["old"], "SUPERSEDES") in memory.lineage


def _whole_forget(line: dict[str, Any], memory: Snapshot) -> bool:
    return _kept(line["fact"], memory) and memory.facts.get(line["fact"], ("forgotten", None))[0] == "forgotten"


Check = Callable[[dict[str, Any], Snapshot], bool]
_WHOLE: dict[str, Check] = {
    "put_many": lambda line, m: all(i in m.episodes or i in m.purged for i in line["ids"]),
    "remember": lambda line, m: _kept(line["fact"], m),
    "consolidate_facts": lambda line, m: _kept(line["fact"], m),
    "supersede": _whole_supersede,
    "forget": _whole_forget,
    "apply_deltas": lambda line, m: all(d in m.applied for d in line["deltas"]),
    "purge_fact": lambda line, m: line["fact"] in m.purged_facts and line["fact"] not in m.facts,
    "entities": lambda line, m: all(n in m.entities for n in line["names"]),
    "relate": lambda line, m: (line["source"], line["target"]) in m.edges,
    "purge": lambda line, m: line["episode"] not in m.episodes and line["episode"] in m.purged,
}


def partial(journal: Journal, memory: Snapshot) -> list[str]:
    """Operations in flight at a kill that left part of themselves behind."""
    problems = []
    for line in journal.in_flight:
        if line["begin"] == "put_many":
            present = [i in memory.episodes or i in memory.purged for i in line["ids"]]
            if any(present) and not all(present):
                problems.append(f"partial batch: {sum(present)} of {len(present)} episodes of {line['ids'][0]}")
        elif line["begin"] == "entities" and 0 < sum(n in memory.entities for n in line["names"]) < len(line["names"]):
            problems.append(f"partial entities: {line['names']}")
        elif line["begin"] == "apply_deltas" and 0 < sum(d in memory.applied for d in line["deltas"]) < 3:
            problems.append(f"partial apply_deltas: {line['deltas']}")
        elif line["begin"] == "supersede" and not _supersede_atomic(line["old"], memory):
            problems.append(f"half a supersede of {line['old']}")
    return problems


def _supersede_atomic(old: str, memory: Snapshot) -> bool:
    if old in memory.purged_facts:
        return True
    closed = memory.facts.get(old, ("", None))[1] is not None
    cited = any(o == old and relation == "SUPERSEDES" for _, o, relation in memory.lineage)
    forgotten = memory.facts.get(old, ("", None))[0] == "forgotten"
    return closed == cited or forgotten


def checkpoint_problems(memory: Snapshot) -> list[str]:
    """Every episode up to the rule's checkpoint promoted exactly once, none after it."""
    cited: dict[str, int] = {}
    for rule, body, *_ in memory.deltas:
        if rule == RULE_ID:
            for episode in json.loads(body).get("source_episode_ids", []):
                cited[episode] = cited.get(episode, 0) + 1
    problems = [f"episode {e} promoted {n} times" for e, n in cited.items() if n > 1]
    for episode, seq in memory.episodes.items():
        if seq <= memory.checkpoint and episode not in cited:
            problems.append(f"episode {episode} (seq {seq}) skipped by the rule (checkpoint {memory.checkpoint})")
        elif seq > memory.checkpoint and episode in cited:
            problems.append(f"episode {episode} (seq {seq}) promoted past the checkpoint {memory.checkpoint}")
    return problems


def delta_problems(memory: Snapshot) -> list[str]:
    """The delta log and the facts agree: applied deltas' facts exist, closed facts are superseded, and back."""
    problems: list[str] = []
    made: set[str] = set()
    closed: set[str] = set()
    for _, _, applied, fact, closes, _ in memory.deltas:
        if applied is None:
            continue
        if fact is not None:
            made.add(fact)
        closed.update(json.loads(closes))
    made -= memory.purged_facts  # a purge removes the facts and keeps their (redacted) deltas
    closed -= memory.purged_facts
    problems += [f"applied delta's fact {f} is missing" for f in made - memory.facts.keys()]
    problems += [f"fact {f} has no applied delta" for f in memory.facts.keys() - made]
    superseded = {f for f, (_, at) in memory.facts.items() if at is not None}
    problems += [f"fact {f} closed by a delta is still current" for f in closed - superseded]
    problems += [f"fact {f} is superseded but no delta closed it" for f in superseded - closed]
    return problems


def problems(journal: Journal, memory: Snapshot) -> tuple[list[str], list[str]]:
    """(data lost, other failures) of the memory against the journal."""
    others = integrity_problems(memory) + partial(journal, memory) + checkpoint_problems(memory)
    others += tiers.partial(journal, memory) + tiers.invariants(journal, memory)
    return lost(journal, memory), others + delta_problems(memory)


# -- the parent: kills and concurrency -----------------------------------------------------------


@dataclass
class Outcome:
    """One row's figures: tries, tries that failed a check, acknowledged operations lost, and what failed."""

    tries: int = 0
    failures: int = 0
    lost: int = 0
    acknowledged: int = 0
    notes: list[str] = field(default_factory=list)


def _child(*args: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), *args]


def _env() -> dict[str, str]:
    """The children import the mnemonite this one imports (a source tree on PYTHONPATH included)."""
    import mnemonite

    source = str(Path(mnemonite.__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}


def lives(url: str, folder: Path) -> None:
    """Fork a writing child for each ``RUN SEED`` line on stdin (from this process, which imported mnemonite
    once); print its pid, then its exit code once it is gone. Its journal goes to ``folder/life-RUN.out``."""
    import mnemonite.memory  # noqa: F401  (before the forks, and before any thread exists)

    for command in sys.stdin:
        run, seed = (int(part) for part in command.split())
        pid = _fork(lambda: crash_child(url, run, seed), folder / f"life-{run}")  # noqa: B023  (called at once)
        print(pid, flush=True)
        print(_reap(pid), flush=True)


async def _life(helper: Any, folder: Path, run: int, rng: random.Random) -> tuple[list[str], str]:
    """One writing child, SIGKILLed at a random moment once it is writing; its journal lines and errors."""
    helper.stdin.write(f"{run} {rng.randrange(2**32)}\n".encode())
    pid = int(await helper.stdout.readline())
    journal = folder / f"life-{run}.out"
    for _ in range(3000):  # the kill lands in the writes, not in the start
        if journal.exists() and journal.read_text().startswith('{"ready"'):
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(rng.uniform(0.02, 0.6))
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    code = int(await helper.stdout.readline())
    lines = [line for line in journal.read_text().splitlines() if line.startswith("{") and "ready" not in line]
    error = (folder / f"life-{run}.err").read_text() if code != -signal.SIGKILL else ""
    return lines, error or ("" if code == -signal.SIGKILL else f"exit code {code}")


async def crash(url: str, kills: int, seed: int = 0) -> Outcome:
    """``kills`` lives of a writing child, each SIGKILLed at a random moment, the memory checked after each."""
    rng, journal, outcome = random.Random(seed), Journal(), Outcome()
    await (await _open(url)).close()  # the schema and the rule exist before the first kill
    with tempfile.TemporaryDirectory(prefix="mnemonite-lives-") as name:
        helper = await asyncio.create_subprocess_exec(
            *_child("lives", url, name), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env={**_env(), "OPENBLAS_NUM_THREADS": "1"},
        )  # fmt: skip
        try:
            memory = await _kill(helper, url, Path(name), kills, rng, journal, outcome)
        finally:
            helper.kill()
            await helper.wait()
    outcome.acknowledged = len(journal.acked)
    if memory.integrity.startswith("not checked"):
        outcome.notes.append(memory.integrity)
    return outcome


async def _kill(
    helper: Any, url: str, folder: Path, kills: int, rng: random.Random, journal: Journal, outcome: Outcome
) -> Snapshot:
    """``kills`` lives, each killed and then checked; the memory as the last check read it."""
    memory = await read_memory(url)
    for run in range(kills):
        lines, error = await _life(helper, folder, run, rng)
        journal.read(lines)
        memory = await read_memory(url)
        gone, broken = problems(journal, memory)
        if error:
            broken.append(f"the child failed by itself: {error.strip().splitlines()[-1]}")
        outcome.tries += 1
        outcome.failures += bool(gone or broken)
        outcome.lost = len(gone)  # the journal is cumulative: what is lost now is lost for good
        outcome.notes += [*gone, *broken][:3]
    return memory


async def concurrency(url: str, writers: int = 8, batches: int = 5, searchers: int = 2) -> Outcome:
    """``writers`` writer processes, a consolidation loop and ``searchers`` on one memory; then every check."""
    await (await _open(url)).close()
    with tempfile.TemporaryDirectory(prefix="mnemonite-fleet-") as name:
        folder = Path(name)
        helper = await asyncio.create_subprocess_exec(
            *_child("fleet", url, str(writers), str(batches), str(searchers), name),
            stderr=asyncio.subprocess.PIPE, env={**_env(), "OPENBLAS_NUM_THREADS": "1"},
        )  # fmt: skip
        _, err = await helper.communicate()
        if helper.returncode != 0:
            return Outcome(tries=1, failures=1, notes=[err.decode().strip()[-300:]])
        codes: dict[str, int] = json.loads((folder / "codes.json").read_text())
        journal, outcome = Journal(), Outcome(tries=len(codes))
        for child, code in codes.items():
            journal.read([line for line in (folder / f"{child}.out").read_text().splitlines() if line.startswith("{")])
            if code != 0:
                outcome.failures += 1
                outcome.notes.append(f"{child}: {(folder / f'{child}.err').read_text().strip()[-300:]}")
    memory = await read_memory(url)
    gone, broken = problems(journal, memory)
    unpromoted = [e for e in memory.episodes if memory.episodes[e] > memory.checkpoint]
    broken += [f"{len(unpromoted)} episodes never promoted"] if unpromoted else []
    broken += tiers.undone(memory)
    outcome.failures += len(broken)
    outcome.lost = len(gone)
    outcome.acknowledged = len(journal.acked)
    outcome.notes += [*gone, *broken][:5]
    return outcome


def rows(backend: str, url: str, quick: bool) -> list[dict[str, object]]:
    """The driver's rows: crash injection and concurrency on the memory at ``url`` (empty)."""
    kills = 4 if quick else int(os.environ.get("MNEMONITE_CRASH_KILLS", "200"))
    out: list[dict[str, object]] = []
    started = time.perf_counter()
    killed = asyncio.run(crash(url, kills))
    out.append(_row(f"SIGKILL during writes ({killed.acknowledged} acknowledged ops)", backend, killed, started))
    started = time.perf_counter()  # on the same memory: its checks cover what the kills left too
    together = asyncio.run(concurrency(url, batches=3 if quick else 20))
    out.append(_row("8 writers + rule + consolidator worker + concepts + 2 searchers", backend, together, started))
    return out


def _row(check: str, backend: str, outcome: Outcome, started: float) -> dict[str, object]:
    for note in outcome.notes:
        print(f"  {backend} {check}: {note}", file=sys.stderr)
    return {"check": check, "backend": backend, "tries": outcome.tries, "failures": outcome.failures,
            "lost": outcome.lost, "leaked": 0, "seconds": round(time.perf_counter() - started, 1)}  # fmt: skip


def main(argv: Sequence[str]) -> None:
    kind, url, *rest = argv
    if kind == "crash-child":
        asyncio.run(crash_child(url, int(rest[0]), int(rest[1])))
    elif kind == "writer-child":
        asyncio.run(writer_child(url, rest[0], int(rest[1])))
    elif kind == "lives":
        lives(url, Path(rest[0]))
    elif kind == "fleet":
        fleet(url, int(rest[0]), int(rest[1]), int(rest[2]), Path(rest[3]))


if __name__ == "__main__":
    main(sys.argv[1:])
