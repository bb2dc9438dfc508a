"""Reliability of the inputs: odd values into every public method, adversarial scope ids, injection.

    python bench/reliability_inputs.py            # SQLite, the long run
    python bench/reliability_inputs.py --quick    # a few seconds

`rows(backend, url, quick)` is what `bench/reliability.py` calls with a fresh, empty memory URL per
backend; each row counts tries, failures (an exception that is not a `MnemoniteError`, or a failed
call that changed the database), rows lost and rows leaked to another user. The catalogue of calls
(`CALLS`), the odd values (`ODD`) and the content hash are also what `tests/reliability/` fuzzes
with hypothesis.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mnemonite import (
    ConsolidationRule,
    Episode,
    Memory,
    MemoryConfig,
    MnemoniteError,
    RecallOptions,
    Scope,
    SearchOptions,
    StoreUnavailableError,
)

Call = Callable[[Memory, Any], Awaitable[object]]
WHO = {"user": "u", "session": "s", "agent": "a"}
US = Scope(user="u", agent="a")
T0 = datetime(2025, 1, 1, tzinfo=UTC)

ODD: dict[str, list[Any]] = {
    "text": [
        "\ud800", "a\udfffb", "a\x00b", "", " ", "\t\n", "x" * 100_000, "💥" * 500, "\u202e\u0301", "ᾲ ǅ ß",
        "' OR 1=1 --", '"; DROP TABLE facts; --', "* OR NEAR(a b)", 'a" AND "b', "%", "_", "\\", "a:b", "(", "^",
        "-x", "../../x", "$.a", "{}", "NULL",
    ],
    "int": [2**63, -(2**63) - 1, 2**64, 10**30, 2**63 - 1, -1, 0, 1],
    "float": [float("nan"), float("inf"), -float("inf"), -0.0, 1e308, -1.0, 2.0, 0.5],
    "wrong": [None, 3.5, 2**63, b"x", ["a"], {"a": 1}, object(), True, ("a",)],
}  # fmt: skip


async def _relate(mem: Memory, relation: Any) -> object:
    alice, paris = await mem.graph.entity(US, "Alice"), await mem.graph.entity(US, "Paris")
    return await mem.graph.relate(US, source=alice.id, target=paris.id, relation=relation)


def _text_calls() -> dict[str, Call]:
    async def put(m: Memory, v: Any) -> object:
        return await m.episodic.put(Episode(content=v, timestamp=T0), **WHO)

    return {
        "episodic.put content": put,
        "episodic.put id": lambda m, v: m.episodic.put(Episode(id=v, content="c"), **WHO),
        "episodic.put source_node": lambda m, v: m.episodic.put(Episode(content="c", source_node=v), **WHO),
        "episodic.put metadata value": lambda m, v: m.episodic.put(Episode(content="c", metadata={"k": v}), **WHO),
        "episodic.put user": lambda m, v: m.episodic.put(Episode(content="c"), user=v, session="s", agent="a"),
        "episodic.put_many session": lambda m, v: m.episodic.put_many([Episode(content="c")], **{**WHO, "session": v}),
        "episodic.get": lambda m, v: m.episodic.get(v),
        "episodic.recent user": lambda m, v: m.episodic.recent(v),
        "episodic.recent agent": lambda m, v: m.episodic.recent("u", None, v),
        "episodic.purge id": lambda m, v: m.episodic.purge(v, reason="r"),
        "episodic.purge reason": lambda m, v: m.episodic.purge("missing", reason=v),
        "episodic.search query": lambda m, v: m.episodic.search("u", v),
        "search query": lambda m, v: m.search("u", v),
        "search scope": lambda m, v: m.search(v, "paris"),
        "search tags": lambda m, v: m.search("u", "paris", tags=[v]),
        "semantic.remember": lambda m, v: m.semantic.remember(US, v),
        "semantic.remember subject": lambda m, v: m.semantic.remember(US, "I like tea", subject=v),
        "semantic.remember tag": lambda m, v: m.semantic.remember(US, "I like green tea", tags=[v]),
        "semantic.get": lambda m, v: m.semantic.get(v),
        "semantic.forget": lambda m, v: m.semantic.forget(v),
        "semantic.supersede id": lambda m, v: m.semantic.supersede(v, "x"),
        "semantic.supersede text": lambda m, v: m.semantic.supersede("f-missing", v),
        "semantic.history": lambda m, v: m.semantic.history(v),
        "semantic.lineage": lambda m, v: m.semantic.lineage(v),
        "semantic.search": lambda m, v: m.semantic.search("u", v),
        "semantic.facts predicate": lambda m, v: m.semantic.facts("u", predicate=v),
        "semantic.add_names": lambda m, v: m.semantic.add_names(US, v),
        "semantic.deltas rule_id": lambda m, v: m.semantic.deltas(rule_id=v),
        "resolve_id": lambda m, v: m.resolve_id("fact", v),
        "add_rule id": lambda m, v: m.add_rule(ConsolidationRule(id=v)),
        "add_rule when_filter": lambda m, v: m.add_rule(ConsolidationRule(id="fuzz", when_filter=v)),
        "remove_rule": lambda m, v: m.remove_rule(v),
        "consolidate": lambda m, v: m.consolidate(v),
        "graph.create_entity name": lambda m, v: m.graph.create_entity(US, name=v, entity_type="thing"),
        "graph.create_entity property": lambda m, v: m.graph.create_entity(
            US, name="E", entity_type="thing", properties={"p": v}
        ),
        "graph.entity": lambda m, v: m.graph.entity(US, v),
        "graph.get_entity": lambda m, v: m.graph.get_entity(v),
        "graph.search_entities": lambda m, v: m.graph.search_entities(US, v),
        "graph.neighbors": lambda m, v: m.graph.neighbors(v),
        "graph.relate relation": _relate,
        "graph.unrelate": lambda m, v: m.graph.unrelate(source=v, target="Paris", relation="LIVES_IN"),
        "graph.context_for": lambda m, v: m.graph.context_for(US, entity="Alice", topic=v),
        "graph.recall": lambda m, v: m.graph.recall(US, RecallOptions(query=v)),
        "graph.touch": lambda m, v: m.graph.touch([v]),
        "graph.stats scope": lambda m, v: m.graph.stats(Scope(user=v, agent="a")),
    }


def _number_calls() -> dict[str, Call]:
    return {
        "episodic.recent limit": lambda m, v: m.episodic.recent("u", limit=v),
        "episodic.salient limit": lambda m, v: m.episodic.salient("u", limit=v),
        "episodic.salient candidates": lambda m, v: m.episodic.salient("u", candidates=v),
        "search k": lambda m, v: m.search("u", "paris", v),
        "semantic.search k": lambda m, v: m.semantic.search("u", "paris", v),
        "semantic.facts limit": lambda m, v: m.semantic.facts("u", limit=v),
        "semantic.conflicts limit": lambda m, v: m.semantic.conflicts("u", limit=v),
        "semantic.deltas limit": lambda m, v: m.semantic.deltas(limit=v),
        "graph.entities limit": lambda m, v: m.graph.entities(US, limit=v),
        "graph.entities offset": lambda m, v: m.graph.entities(US, offset=v),
        "graph.neighbors depth": lambda m, v: m.graph.neighbors("missing", depth=v),
        "graph.edges_from limit": lambda m, v: m.graph.edges_from("missing", limit=v),
        "graph.search_entities limit": lambda m, v: m.graph.search_entities(US, "a", limit=v),
        "graph.context_for max_tokens": lambda m, v: m.graph.context_for(US, entity="Alice", max_tokens=v),
        "graph.recall limit": lambda m, v: m.graph.recall(US, limit=v),
    }


def _float_calls() -> dict[str, Call]:
    return {
        "graph.decay_all factor": lambda m, v: m.graph.decay_all(US, v),
        "semantic.remember confidence": lambda m, v: m.semantic.remember(US, "I like coffee", confidence=v),
        "search options rrf_k": lambda m, v: m.search("u", "paris", options=SearchOptions(rrf_k=v)),
        "graph.recall min_salience": lambda m, v: m.graph.recall(US, min_salience=v),
    }


def _any_calls() -> dict[str, Call]:
    return {
        "search since": lambda m, v: m.search("u", "paris", since=v),
        "semantic.facts as_of": lambda m, v: m.semantic.facts("u", as_of=v),
        "semantic.apply_delta": lambda m, v: m.semantic.apply_delta(v),
        "episodic.put episode": lambda m, v: m.episodic.put(v, **WHO),
        "episodic.put_many episodes": lambda m, v: m.episodic.put_many(v, **WHO),
        "graph.create_entities": lambda m, v: m.graph.create_entities(US, v),
        "graph.relate_many": lambda m, v: m.graph.relate_many(US, v),
        "search tiers": lambda m, v: m.search("u", "paris", tiers=v),
        "consolidate rule": lambda m, v: m.consolidate(v),
        "run_due now": lambda m, v: m.run_due(v),
        "episodic.purge_scope derived": lambda m, v: m.episodic.purge_scope("nobody", reason="r", derived=v),
    }


# Each call with the kinds of value it is fuzzed with (wrong types always join in).
CALLS: dict[str, tuple[str, Call]] = {
    **{name: ("text", call) for name, call in _text_calls().items()},
    **{name: ("int", call) for name, call in _number_calls().items()},
    **{name: ("float", call) for name, call in _float_calls().items()},
    **{name: ("wrong", call) for name, call in _any_calls().items()},
}


async def seed(mem: Memory) -> None:
    """What the calls find: an episode, a fact, two related entities, a rule."""
    await mem.episodic.put(Episode(id="e1", content="I live in Paris", timestamp=T0), **WHO)
    await mem.semantic.remember(US, "My sister lives in Lyon")
    alice = await mem.graph.create_entity(US, name="Alice", entity_type="person")
    paris = await mem.graph.create_entity(US, name="Paris", entity_type="place")
    await mem.graph.relate(US, source=alice.id, target=paris.id, relation="LIVES_IN")
    await mem.add_rule(ConsolidationRule(id="nightly"))


def content_hash(url: str) -> str:
    """sha256 over every row of every table (sorted), so that any change to stored content shows."""
    digest = hashlib.sha256()
    for table, rows in sorted(_table_rows(url).items()):
        digest.update(table.encode())
        for row in sorted(repr(r) for r in rows):
            digest.update(row.encode("utf-8", "backslashreplace"))
    return digest.hexdigest()


def _table_rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    if url.startswith("sqlite:///"):
        with closing(sqlite3.connect(f"file:{url.removeprefix('sqlite:///')}?mode=ro", uri=True)) as db:
            names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return {n: db.execute(f'SELECT * FROM "{n}"').fetchall() for n in names}
    pg = _server_connection(url)
    names = [r[0] for r in pg.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
    return {n: pg.execute(f'SELECT * FROM "{n}"').fetchall() for n in names}


_SERVER_CONNECTIONS: dict[str, Any] = {}


def _server_connection(url: str) -> Any:
    """One autocommit connection per database for the hashes (a new one per probe costs more than the probe)."""
    import psycopg

    known = _SERVER_CONNECTIONS.get(url)
    if known is None or known.closed:
        known = _SERVER_CONNECTIONS[url] = psycopg.connect(url, autocommit=True)
    return known


def close_connections() -> None:
    """Close the hash connections (before the database is dropped)."""
    while _SERVER_CONNECTIONS:
        _SERVER_CONNECTIONS.popitem()[1].close()


async def probe(mem: Memory, url: str, call: Call, value: Any) -> str | None:
    """Run one call; a problem (an untyped exception, or a refused call that changed content), or None."""
    before = content_hash(url)
    try:
        await call(mem, value)
    except StoreUnavailableError as error:  # an input must never take the server down
        return f"the server went away: {error}"
    except MnemoniteError:
        if content_hash(url) != before:
            return "a refused call changed the database"
    except Exception as error:  # the very thing this probe looks for
        return f"{type(error).__module__}.{type(error).__name__}: {error}"
    return None


def values_for(kind: str, rng: random.Random, count: int) -> list[Any]:
    """The catalogue's odd values of a kind and of wrong types, then random ones, ``count`` in all."""
    fixed = [*ODD[kind], *ODD["wrong"]] if kind != "wrong" else [*ODD["wrong"], *ODD["text"][:4], *ODD["int"][:3]]
    if count <= len(fixed):
        return rng.sample(fixed, count)
    return fixed + [_random_value(kind, rng) for _ in range(count - len(fixed))]


def _random_value(kind: str, rng: random.Random) -> Any:
    if kind == "int":
        return rng.choice([rng.randint(-(2**70), 2**70), rng.randint(-5, 5)])
    if kind == "float":
        return rng.choice([rng.uniform(-1e9, 1e9), rng.random()])
    alphabet = [chr(rng.randint(0, 0x10FFFF)) for _ in range(40)]
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))


Row = dict[str, object]


async def _fuzz_row(backend: str, url: str, quick: bool) -> Row:
    rng, start, tries, failures = random.Random(7), time.perf_counter(), 0, 0
    mem = await Memory.open(url, config=MemoryConfig(index_in_background=False))
    try:
        await seed(mem)
        for name, (kind, call) in CALLS.items():
            for value in values_for(kind, rng, 8 if quick else 60):
                tries += 1
                problem = await probe(mem, url, call, value)
                if problem is not None:
                    failures += 1
                    print(f"  {backend} {name} {value!r:.40}: {problem[:200]}", file=sys.stderr)
    finally:
        await mem.close(finish_indexing=False)
        close_connections()
    return _row("fuzz: odd values into every public method", backend, tries, failures, 0, 0, start)


def _row(check: str, backend: str, tries: int, failures: int, lost: int, leaked: int, start: float) -> Row:
    return {"check": check, "backend": backend, "tries": tries, "failures": failures, "lost": lost,
            "leaked": leaked, "seconds": round(time.perf_counter() - start, 2)}  # fmt: skip


def rows(backend: str, url: str, quick: bool) -> list[dict[str, object]]:
    """The rows of this script for one backend, on ``url`` (a fresh, empty memory)."""
    return [asyncio.run(_fuzz_row(backend, url, quick)), asyncio.run(_security_row(backend, url, quick))]


# -- security: adversarial scope ids over every read surface, injection through every text -----

# Neighbours in every sense: prefixes, case, LIKE wildcards, separators, escapes, quotes, operators.
USERS = [
    "alice", "alice2", "Alice", "ali", "alic_", "a%", "a_b", "x/y", "%", "_", "\\", "alice/", "/user/alice",
    "alice%2F", "alice%", "' OR '1'='1", "*", "alice\\", "al ice", "ålice", "a\tb",
]  # fmt: skip
INJECTIONS = [
    "1=1; DROP TABLE facts", "content = '' OR 1=1 --", "content = 'x' /* */ OR 1=1", "(SELECT 1) = 1",
    "load_extension('x') IS NULL", "randomblob(1000000000) IS NULL", "metadata.\"a') OR 1=1 --\" = 1",
    "id IN (SELECT id FROM facts)", "content LIKE '%' ESCAPE '\\'", "user = 'alice' UNION SELECT * FROM facts",
    "metadata.a.b.c.d = 1", "pg_sleep(5) IS NULL", "content = $$x$$", "content = E'\\x00'",
]  # fmt: skip


def marker(index: int) -> str:
    return f"zqmark{index:03d}"  # one token the tokenizers keep whole


async def write_everyone(mem: Memory, users: list[str]) -> dict[str, dict[str, str]]:
    """Each user: an episode, a fact, two related entities, all carrying the user's marker; their ids."""
    ids: dict[str, dict[str, str]] = {}
    for i, user in enumerate(users):
        scope, mark = Scope(user=user, agent="a"), marker(i)
        episode = await mem.episodic.put(Episode(content=f"{mark} visited Rome", timestamp=T0), user=user,
                                         session="s", agent="a")  # fmt: skip
        entity = await mem.graph.create_entity(scope, name=f"{mark} {user}", entity_type="person")
        fact = await mem.semantic.remember(scope, f"{mark} likes green tea", entities=[entity.id])
        other = await mem.graph.create_entity(scope, name=f"P{mark}", entity_type="place")
        await mem.graph.relate(scope, source=entity.id, target=other.id, relation="LIVES_IN")
        ids[user] = {"episode": episode.id, "fact": fact.id, "entity": entity.id, "name": entity.name}
    return ids


async def leaks_for(mem: Memory, users: list[str], ids: dict[str, dict[str, str]], user: str) -> list[str]:
    """Every read surface in ``user``'s scope; the other users' markers or ids it returned."""
    own, scope = marker(users.index(user)), Scope(user=user, agent="a")
    seen: list[str] = []
    for name, read in _reads(mem, scope, ids, user).items():
        try:
            text = repr(await read())
        except MnemoniteError as error:  # NotFound for another user's entity name is the right answer
            text = type(error).__name__  # (its message quotes the name asked for)
        seen += [f"{name}: {m}" for m in _markers(text) if m != own]
        seen += [f"{name}: {u}'s {kind}" for u in users if u != user for kind, v in ids[u].items()
                 if kind != "name" and v in text]  # fmt: skip
    return seen


def _reads(
    mem: Memory, scope: Scope, ids: dict[str, dict[str, str]], user: str
) -> dict[str, Callable[[], Awaitable[object]]]:
    others = [v for u, v in ids.items() if u != user]
    foreign = others[0] if others else ids[user]
    return {
        "recent": lambda: mem.episodic.recent(user, limit=1000),
        "recent agent": lambda: mem.episodic.recent(user, "s", "a", limit=1000),
        "salient": lambda: mem.episodic.salient(user, limit=1000),
        "search": lambda: mem.search(user, "visited Rome green tea zqmark", k=1000),
        "episodic.search": lambda: mem.episodic.search(scope, "Rome", k=1000),
        "semantic.search": lambda: mem.semantic.search(scope, "green tea", k=1000),
        "facts": lambda: mem.semantic.facts(scope, limit=1000),
        "conflicts": lambda: mem.semantic.conflicts(user, limit=1000),
        "purges": lambda: mem.semantic.purges(user),
        "entities": lambda: mem.graph.entities(scope, limit=1000),
        "search_entities": lambda: mem.graph.search_entities(scope, "zqmark", limit=1000),
        "entity by another's name": lambda: mem.graph.entity(scope, foreign["name"]),
        "recall": lambda: mem.graph.recall(scope, query="green tea", limit=1000),
        "recall by another's entity": lambda: mem.graph.recall(scope, entity_ids=[foreign["entity"]], limit=1000),
        "context_for another's entity": lambda: mem.graph.context_for(scope, entity=foreign["name"], topic="tea"),
        "neighbors of own entity": lambda: mem.graph.neighbors(ids[user]["entity"], depth=3),
        "stats": lambda: mem.graph.stats(scope),
    }


def _markers(text: str) -> set[str]:
    import re

    return set(re.findall(r"zqmark\d{3}", text))


async def injection_problems(mem: Memory, url: str) -> list[str]:
    """Every injection refused with a typed error, or run as data: the schema and the other rows intact."""
    problems = []
    tables = set(_table_rows(url))
    for text in INJECTIONS:
        before = content_hash(url)
        try:
            await mem.add_rule(ConsolidationRule(id="inject", when_filter=text))
        except MnemoniteError:
            if content_hash(url) != before:
                problems.append(f"refused filter {text!r} changed the database")
            continue
        await mem.remove_rule("inject")
        problems.append(f"filter {text!r} was accepted")
    for text in [*INJECTIONS, *ODD["text"][10:]]:
        entity = await mem.graph.create_entity(US, name=f"n{len(problems)} {text}", entity_type=text or "t")
        if (await mem.graph.get_entity(entity.id)).name != entity.name:
            problems.append(f"entity name {text!r} did not come back verbatim")
        await mem.graph.delete_entity(entity.id)
        await mem.search("u", text)
        await mem.semantic.search("u", text)
    if set(_table_rows(url)) != tables:
        problems.append("the set of tables changed")
    return problems


async def _security_row(backend: str, url: str, quick: bool) -> Row:
    start, users = time.perf_counter(), USERS[:8] if quick else USERS
    mem = await Memory.open(url, config=MemoryConfig(index_in_background=False))
    try:
        ids = await write_everyone(mem, users)
        leaked = [leak for user in users for leak in await leaks_for(mem, users, ids, user)]
        failures = await injection_problems(mem, url)
    finally:
        await mem.close(finish_indexing=False)
        close_connections()
    for problem in [*leaked, *failures]:
        print(f"  {backend} {problem}", file=sys.stderr)
    tries = len(users) * len(_reads(mem, US, ids, users[0])) + 2 * len(INJECTIONS) + len(ODD["text"][10:])
    return _row("security: scope ids x reads, injection", backend, tries, len(failures), 0, len(leaked), start)


def print_table(found: list[dict[str, object]]) -> None:
    """The rows as a plain-text table."""
    header = ("check", "backend", "tries", "failures", "lost", "leaked", "seconds")
    widths = [max(len(h), *(len(str(r[h])) for r in found)) for h in header]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for row in found:
        print("  ".join(str(row[h]).ljust(w) for h, w in zip(header, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="eight values per call instead of sixty")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print_table(rows("sqlite", f"sqlite:///{Path(folder) / 'memory.db'}", args.quick))


if __name__ == "__main__":
    main()
