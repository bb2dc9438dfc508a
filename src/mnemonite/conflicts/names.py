"""Who "I" is: the names a scope's user goes by, kept as facts (subject ``user``, predicate ``alias``)."""

from __future__ import annotations

import time

from mnemonite._time import utcnow
from mnemonite.conflicts.pack import USER, LocalePack, Triple
from mnemonite.models import AddDelta, Fact, FactFilter
from mnemonite.store import Store

TTL_S = 10.0  # a name another process records is seen within this many seconds


class UserNames:
    """The user's names per (user, agent): read with one narrow query, cached briefly, written as facts."""

    def __init__(self, store: Store, locale: LocalePack) -> None:
        self._store, self.locale = store, locale
        self._cache: dict[tuple[str, str], tuple[float, frozenset[str]]] = {}

    async def known(self, user: str, agent: str) -> frozenset[str]:
        """Every name of the user, lower-cased: recorded aliases, and the user id when it is a plain word."""
        cached = self._cache.get((user, agent))
        if cached is not None and time.monotonic() - cached[0] < TTL_S:
            return cached[1]
        # "my name is jo" is also kept as an alias when remembered, so one narrow read finds every name
        flt = FactFilter(user=user, agent=agent, subject=USER, predicate="alias", limit=1000)
        found = {fact.object for fact in await self._store.facts(flt) if fact.object}
        if user.isalpha():
            found.add(user.lower())
        names = frozenset(found - set(self.locale.first_person))
        self._cache[(user, agent)] = (time.monotonic(), names)
        return names

    async def add(self, user: str, agent: str, names: list[str]) -> None:
        """Record the names not known yet (already checked and lower-cased), in one transaction."""
        known = await self.known(user, agent)
        now = utcnow()
        deltas = [
            AddDelta(source_episode_ids=[], promotion_ts=now, rule_id="names", confidence=1.0,
                     fact_payload={"text": f"My name is {name.title()}", "user": user, "agent": agent,
                                   "subject": USER, "predicate": "alias", "object": name, "valid_from": now})
            for name in dict.fromkeys(names) if name not in known
        ]  # fmt: skip
        if deltas:
            await self._store.apply_deltas(deltas)
            self._cache.pop((user, agent), None)

    async def learn(self, user: str, agent: str, text: str) -> None:
        """Record the names the user gives themselves in ``text`` ("I'm Jo", "call me Jo")."""
        declared = self.locale.declared_names(text)
        if declared:
            await self.add(user, agent, declared)

    async def same_predicate(self, user: str, agent: str, triple: Triple, names: frozenset[str]) -> list[Fact]:
        """Held facts stored with the candidate's (subject, predicate), under any of the user's names.

        Facts are stored with the resolved subject (``user``); only one written before a name was
        learned carries the name itself (the user id never: it is known from the start)."""
        learned = sorted(names - {user.lower()})
        subjects = [triple.subject, *learned] if triple.subject == USER else [triple.subject]
        found: list[Fact] = []
        for subject in subjects:
            flt = FactFilter(user=user, agent=agent, subject=subject, predicate=triple.predicate)
            found.extend(await self._store.facts(flt))
        return found
