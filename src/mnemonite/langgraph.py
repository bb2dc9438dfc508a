"""A LangGraph store (`BaseStore`) kept in mnemonite: ``pip install "mnemonite[langgraph]"``.

::

    from mnemonite import SyncMemory
    from mnemonite.langgraph import MnemoniteStore

    store = MnemoniteStore(SyncMemory.open("memory.db"), user="alice")
    graph = builder.compile(store=store)

Namespaces map to scopes: a store is bound to one user (as an API key is), and the first label
of a namespace is the agent (``("memories", "prefs")`` lives under agent ``memories``); the
rest of the namespace and the key are kept with the item. Each item is a fact (tag
``langgraph``): a put with a key that exists supersedes the current version, a delete forgets
it, so `Memory.semantic.facts(..., as_of=...)` replays what the store held at any moment.
Search with a ``query`` is mnemonite's hybrid search (full text and vectors) over the items'
text (their string values); ``filter`` matches values exactly or with ``$eq``, ``$ne``,
``$gt``, ``$gte``, ``$lt``, ``$lte``. TTLs are not supported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, TypeVar

import orjson
from langgraph.store.base import (
    BaseStore,
    GetOp,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from mnemonite._time import utcnow
from mnemonite.errors import InvalidInputError
from mnemonite.memory import Memory
from mnemonite.models import AddDelta, DeleteDelta, Fact, UpdateDelta
from mnemonite.scope import Scope
from mnemonite.sync import SyncMemory

__all__ = ["MnemoniteStore"]

T = TypeVar("T")
TAG = "langgraph"
PREDICATE = "langgraph.item"
MAX_TEXT = 8_000  # remember's limit; the whole value is kept in the payload whatever its size
_SCAN = 100_000


class MnemoniteStore(BaseStore):
    """LangGraph's `BaseStore` over a mnemonite memory, bound to one user.

    Takes a `SyncMemory` (both the blocking and the async API work) or a `Memory` (the async API
    only: ``aget``, ``aput``, ``asearch``, ...).
    """

    supports_ttl = False

    def __init__(self, memory: Memory | SyncMemory, *, user: str) -> None:
        self._sync = memory if isinstance(memory, SyncMemory) else None
        self._memory: Memory = memory._memory if isinstance(memory, SyncMemory) else memory
        self.user = Scope(user=user).user

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order; needs a `SyncMemory`."""
        if self._sync is None:
            raise InvalidInputError("this store wraps an async Memory: use the async API (abatch, aput, ...)")
        return self._sync._run(self.abatch(ops))  # the facade's own loop runs the memory

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order, each seeing the writes of those before it."""
        results: list[Result] = []
        for op in ops:
            results.append(await self._run(op))
        return results

    async def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            fact = await self._current(op.namespace, op.key)
            return None if fact is None else _item(fact)
        if isinstance(op, PutOp):
            await self._put(op)
            return None
        if isinstance(op, SearchOp):
            return await self._search(op)
        if isinstance(op, ListNamespacesOp):
            return await self._namespaces(op)
        raise InvalidInputError(f"unknown store operation {type(op).__name__}")

    # -- reads and writes ------------------------------------------------------------------------

    def _scope(self, namespace: tuple[str, ...]) -> Scope:
        if not namespace:
            raise InvalidInputError("a namespace needs at least one label (the first one is the agent)")
        return Scope(user=self.user, agent=namespace[0])

    async def _current(self, namespace: tuple[str, ...], key: str) -> Fact | None:
        found = await self._memory.semantic.facts(
            self._scope(namespace), subject=_subject(namespace, key), predicate=PREDICATE, limit=1
        )
        return found[0] if found else None

    async def _put(self, op: PutOp) -> None:
        current = await self._current(op.namespace, op.key)
        now = utcnow()
        provenance: dict[str, Any] = {"source_episode_ids": [], "promotion_ts": now, "rule_id": TAG, "confidence": 1.0}
        if op.value is None:
            if current is not None:
                await self._memory.semantic.apply_delta(DeleteDelta(replaces=[current.id], **provenance))
            return
        created = current.payload.get("created_at") if current is not None else None
        payload = {"text": _text(op.value), "user": self.user, "agent": op.namespace[0], "valid_from": now,
                   "subject": _subject(op.namespace, op.key), "predicate": PREDICATE, "tags": [TAG],
                   "payload": {"namespace": list(op.namespace), "key": op.key, "value": op.value,
                               "created_at": created or now.isoformat()}}  # fmt: skip
        delta = (
            AddDelta(fact_payload=payload, **provenance)
            if current is None
            else UpdateDelta(replaces=[current.id], fact_payload=payload, **provenance)
        )
        await self._memory.semantic.apply_delta(delta)

    async def _items(self, prefix: tuple[str, ...]) -> list[Fact]:
        """Every current item under a namespace prefix, newest first."""
        scope = Scope(user=self.user, agent=prefix[0]) if prefix else Scope(user=self.user)
        facts = await self._memory.semantic.facts(scope, predicate=PREDICATE, limit=_SCAN)
        return [fact for fact in facts if _namespace(fact)[: len(prefix)] == prefix]

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        if op.query:
            scope = Scope(user=self.user, agent=prefix[0]) if prefix else Scope(user=self.user)
            wanted = min(max(4 * (op.offset + op.limit), 50), 1000)  # filters apply after ranking
            hits = await self._memory.semantic.search(scope, op.query, wanted, tags=[TAG])
            ranked: list[tuple[Fact, float | None]] = [
                (hit.record, hit.score) for hit in hits if isinstance(hit.record, Fact)
            ]
        else:
            ranked = [(fact, None) for fact in await self._items(prefix)]
        kept = [(fact, score) for fact, score in ranked
                if _namespace(fact)[: len(prefix)] == prefix and _matches(_value(fact), op.filter or {})]  # fmt: skip
        return [_item(fact, score) for fact, score in kept[op.offset : op.offset + op.limit]]

    async def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = {_namespace(fact) for fact in await self._items(())}
        for condition in op.match_conditions or ():
            found = {ns for ns in found if _condition(ns, condition.match_type, tuple(condition.path))}
        if op.max_depth is not None:
            found = {ns[: op.max_depth] for ns in found}
        return sorted(found)[op.offset : op.offset + op.limit]


def _subject(namespace: tuple[str, ...], key: str) -> str:
    """The fact subject that names an item: the rest of its namespace and its key, as JSON (no collisions)."""
    return "lg:" + orjson.dumps([*namespace[1:], key]).decode()


def _text(value: Mapping[str, Any]) -> str:
    """What search reads of a value: its string leaves, else its JSON."""
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"a LangGraph item's value is a dict, got {type(value).__name__}")
    strings = [leaf for leaf in _leaves(value) if leaf.strip()]
    text = "\n".join(strings) if strings else orjson.dumps(value).decode()
    return text[:MAX_TEXT]


def _leaves(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _leaves(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _leaves(inner)


def _namespace(fact: Fact) -> tuple[str, ...]:
    return tuple(fact.payload.get("namespace", ()))


def _value(fact: Fact) -> dict[str, Any]:
    value: dict[str, Any] = fact.payload.get("value", {})
    return value


def _item(fact: Fact, score: float | None = None) -> SearchItem:
    created = fact.payload.get("created_at")
    return SearchItem(namespace=_namespace(fact), key=str(fact.payload["key"]), value=_value(fact),
                      created_at=datetime.fromisoformat(created) if created else fact.recorded_at,
                      updated_at=fact.recorded_at, score=score)  # fmt: skip


_COMPARE = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def _matches(value: dict[str, Any], conditions: dict[str, Any]) -> bool:
    """Whether a value meets every condition of a LangGraph filter."""
    return all(_meets(_at(value, key), wanted) for key, wanted in conditions.items())


def _at(value: dict[str, Any], path: str) -> Any:
    here: Any = value
    for part in path.split("."):
        here = here.get(part) if isinstance(here, dict) else None
    return here


def _meets(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict) and wanted and all(key.startswith("$") for key in wanted):
        unknown = set(wanted) - set(_COMPARE)
        if unknown:
            raise InvalidInputError(f"unknown filter operators {sorted(unknown)}; use {', '.join(_COMPARE)}")
        try:
            return all(_COMPARE[op](actual, operand) for op, operand in wanted.items())
        except TypeError:  # None or another type against a number: no match
            return False
    return bool(actual == wanted)


def _condition(namespace: tuple[str, ...], kind: str, path: tuple[str, ...]) -> bool:
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if kind == "prefix" else namespace[len(namespace) - len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))
