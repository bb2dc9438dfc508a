"""The episodic tier: raw events under (user, session, agent), read newest first or by salience."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from typing import Any

from pydantic import Field

from mnemonite.errors import InvalidInputError, MemoryScopeError, NotFoundError
from mnemonite.inputs import checked
from mnemonite.models import ConsolidationRule, Episode, MemoryDelta
from mnemonite.models.base import Model
from mnemonite.models.conflict import PurgeRecord
from mnemonite.models.search import SearchFilter, SearchHit
from mnemonite.models.sensitivity import Sensitivity, check_sensitivity
from mnemonite.privacy import SECRETS_KEY, SecretGuard
from mnemonite.salience import RuleBasedScorer, SalienceContext, SalienceScorer, importance_of
from mnemonite.scope import Scope, as_scope
from mnemonite.search import Reranker, SearchEngine, SearchOptions
from mnemonite.store import Store

__all__ = ["EpisodicTier", "RecalledEpisode", "SalientEpisode", "resolve_scope"]

AfterPut = Callable[[], Awaitable[Any]]


class SalientEpisode(Model):
    """An episode and its salience score in [0, 1]."""

    episode: Episode
    salience: float


class RecalledEpisode(Model):
    """An episode recalled for a query, with the three signals that ranked it (each in [0, 1])."""

    episode: Episode
    relevance: float
    recency: float
    salience: float
    score: float
    superseded: bool = Field(
        default=False,
        description="the facts read from it were all superseded or forgotten since: what it said is not what memory"
        " holds now (as `SearchHit.superseded`)",
    )


class Recalled(list[RecalledEpisode]):
    """What `EpisodicTier.recall` returns: the episodes, best first, and ``unsearched`` as `SearchResults` says it
    (episodes of the scope not compared by meaning, having no vector yet)."""

    unsearched: int

    def __init__(self, episodes: list[RecalledEpisode], *, unsearched: int = 0) -> None:
        super().__init__(episodes)
        self.unsearched = unsearched


def resolve_scope(user: str | Scope, session: str | None = None, agent: str | None = None) -> Scope:
    """Accept the spec's positional form ``("alice", "S1", "rag")`` or a `Scope`."""
    if isinstance(user, Scope):
        if session is not None or agent is not None:
            raise MemoryScopeError("pass either a Scope or user/session/agent strings, not both")
        return user
    return Scope(user=user, session=session, agent=agent)


@checked
class EpisodicTier:
    """``mem.episodic``: put episodes, read them back, and consolidate them into deltas."""

    def __init__(
        self,
        store: Store,
        *,
        track_access: bool,
        after_put: AfterPut | None = None,
        scorer: SalienceScorer | None = None,
        engine: SearchEngine | None = None,
        sensitivity: Sensitivity = "internal",
        guard: SecretGuard | None = None,
    ) -> None:
        self._store = store
        self._sensitivity = check_sensitivity(sensitivity, "internal")
        self._guard = guard or SecretGuard()
        self._engine = engine or SearchEngine(store)
        self._track_access = track_access
        self._after_put = after_put
        self._scorer: SalienceScorer = scorer or RuleBasedScorer()

    async def put(
        self, episode: Episode, *, user: str | None = None, session: str | None = None, agent: str | None = None
    ) -> Episode:
        """Store one episode under (user, session, agent), given here or carried by the episode.

        An episode that does not set its ``sensitivity`` gets the tier's default (`MemoryConfig.sensitivity`).
        A secret recognised in its content (a card number, a key, a password said aloud) is stored as
        ``[secret: card number]`` and makes the episode secret (see `mnemonite.privacy`).
        """
        stored = self._classified(_with_scope(episode, user, session, agent))
        assert stored.user is not None and stored.session is not None and stored.agent is not None
        await self._store.put(stored, user=stored.user, session=stored.session, agent=stored.agent)
        await self._fire_rules()
        if "id" in episode.model_fields_set and "timestamp" not in episode.model_fields_set:
            # a retry of an id given without a time keeps the time of its first put: what memory holds
            return await self._store.get_episode(stored.id) or stored
        return stored

    async def record(self, scope: Scope, content: str, **fields: Any) -> Episode:
        """Record what happened, in the specification's words: ``record(scope, content)``.

        ``scope`` names the user, session and agent; ``fields`` are any other `Episode` fields
        (``timestamp``, ``source_node``, ``metadata``, ...). The same as `put` of an `Episode`.
        """
        if not isinstance(scope, Scope):
            raise MemoryScopeError(f"record needs a Scope with user, session and agent, got {type(scope).__name__}")
        if scope.session is None or scope.agent is None:
            raise MemoryScopeError(f"an episode is recorded under a user, a session and an agent; {scope} lacks one")
        for key in ("user", "session", "agent"):
            if key in fields:
                raise InvalidInputError(f"{key!r} comes from the scope, not from a field")
        episode = Episode.model_validate({"content": content, **fields})
        return await self.put(episode, user=scope.user, session=scope.session, agent=scope.agent)

    async def put_many(
        self,
        episodes: Iterable[Episode],
        *,
        user: str | None = None,
        session: str | None = None,
        agent: str | None = None,
    ) -> int:
        """Store many episodes in one transaction (all or none); returns how many were new."""
        batch = [self._classified(_with_scope(e, user, session, agent)) for e in episodes]
        inserted = await self._store.put_many(batch)
        await self._fire_rules()
        return inserted

    async def get(self, episode_id: str) -> Episode:
        """One episode by id, or NotFoundError."""
        episode = await self._store.get_episode(episode_id)
        if episode is None:
            raise NotFoundError(f"no episode with id {episode_id!r}")
        return episode

    async def purge(self, episode_id: str, *, reason: str, derived: bool = False) -> PurgeRecord:
        """Remove an episode for good (a privacy request: what a user said), in one transaction.

        Its vector and full-text rows go with it, and search never returns it again. The facts
        promoted from it are named in the returned `PurgeRecord` (``derived_fact_ids``); with
        ``derived=True`` they are purged too, with their supersede chains. The record, without
        any text, stays in `mem.semantic.purges`.
        """
        return await self._store.purge_episodes(episode_id, _reason(reason), derived)

    async def purge_scope(self, scope: Scope | str, *, reason: str, derived: bool = False) -> PurgeRecord:
        """`purge` every episode of a scope (a user id: everything that user said, in every session)."""
        return await self._store.purge_episodes(as_scope(scope), _reason(reason), derived)

    async def recent(
        self,
        user: str | Scope,
        session: str | None = None,
        agent: str | None = None,
        *,
        limit: int = 10,
        until: datetime | None = None,
    ) -> list[Episode]:
        """The newest episodes of a scope (at or before ``until`` when given: a page of the past);
        omitting session, or session and agent, widens the read."""
        scope = resolve_scope(user, session, agent)
        episodes = await self._store.recent(scope.user, scope.session, scope.agent, limit=limit, until=until)
        await self._touch(episodes)
        return episodes

    async def salient(
        self, scope: Scope | str, *, limit: int = 10, context: SalienceContext | None = None, candidates: int = 200
    ) -> list[SalientEpisode]:
        """The most salient episodes of a scope, best first, scored among the most recently used."""
        context = context or SalienceContext()
        read = as_scope(scope)
        pool = await self._store.recent(
            read.user, read.session, read.agent, limit=max(limit, candidates), order="accessed"
        )
        scored = [SalientEpisode(episode=e, salience=await self._scorer.score(e, context)) for e in pool]
        scored.sort(key=lambda item: item.salience, reverse=True)
        best = scored[:limit]
        await self._touch([item.episode for item in best])
        return best

    async def search(
        self,
        scope: Scope | str,
        query: str,
        k: int = 10,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        options: SearchOptions | None = None,
        reranker: Reranker | None = None,
    ) -> list[SearchHit]:
        """Hybrid search over this scope's episodes, best first."""
        flt = SearchFilter(scope=as_scope(scope), tiers=("episodic",), since=since, until=until)
        return await self._engine.search(query, flt, k, options=options, reranker=reranker)

    async def recall(
        self,
        scope: Scope | str,
        query: str,
        k: int = 5,
        *,
        candidates: int = 50,
        context: SalienceContext | None = None,
    ) -> list[RecalledEpisode]:
        """The ``k`` episodes best for ``query`` by the triple signal, best first.

        Relevance is the hybrid search score relative to the best hit, recency decays from the last
        access (or the event) with τ from ``context``, salience is the episode's marked importance
        (``metadata.importance``); the score is their mean (Park et al. 2023, equal weights).
        """
        if not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k must be a positive integer, got {k!r}")
        context = context or SalienceContext()
        hits = await self.search(scope, query, max(k, candidates))
        top = max((hit.score for hit in hits), default=0.0) or 1.0
        recency = RuleBasedScorer().recency
        recalled = [_recalled(hit.record, hit.score / top, recency(hit.record, context), hit.superseded) for hit in hits
                    if isinstance(hit.record, Episode)]  # fmt: skip
        recalled.sort(key=lambda item: item.score, reverse=True)
        best = recalled[:k]
        await self._touch([item.episode for item in best])
        return Recalled(best, unsearched=getattr(hits, "unsearched", 0))

    async def consolidate(self, rule: ConsolidationRule) -> list[MemoryDelta]:
        """Claim the rule's new episodes and return their deltas, for `semantic.apply_delta`.

        The episodes are claimed at once (a rule never sees an episode twice) and the
        deltas are kept in the delta log until applied: `semantic.apply_pending()`
        applies any left behind by a crash between the two steps.
        """
        return await self._store.consolidate(rule)

    def _classified(self, episode: Episode) -> Episode:
        """The episode as stored: the tier's sensitivity unless it sets one, secrets recognised in it masked."""
        level = episode.sensitivity if "sensitivity" in episode.model_fields_set else self._sensitivity
        guarded = self._guard.text(episode.content, level)
        if not guarded.spans and SECRETS_KEY not in episode.metadata:
            if guarded.sensitivity == episode.sensitivity:
                return episode  # nothing to change: no copy (a bulk import's common case)
            return episode.model_copy(update={"sensitivity": guarded.sensitivity})
        metadata = guarded.into(episode.metadata)
        return episode.model_copy(
            update={"sensitivity": guarded.sensitivity, "content": guarded.text, "metadata": metadata}
        )

    async def _touch(self, episodes: list[Episode]) -> None:
        if self._track_access and episodes:
            await self._store.touch_episodes([e.id for e in episodes])

    async def _fire_rules(self) -> None:
        if self._after_put is not None:
            await self._after_put()


def _recalled(episode: Episode, relevance: float, recency: float, superseded: bool) -> RecalledEpisode:
    relevance = max(0.0, min(1.0, relevance))
    salience = importance_of(episode)
    score = (relevance + recency + salience) / 3
    return RecalledEpisode(
        episode=episode, relevance=relevance, recency=recency, salience=salience, score=score, superseded=superseded
    )


def _with_scope(episode: Episode, user: str | None, session: str | None, agent: str | None) -> Episode:
    if not isinstance(episode, Episode):
        raise InvalidInputError(f"expected an Episode, got {type(episode).__name__}")
    return episode.in_scope(user, session, agent)


def _reason(reason: str) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInputError("purge needs a reason (it is kept in the audit log)")
    return reason.strip()
