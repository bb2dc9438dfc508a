"""The episodic tier and cross-tier search over HTTP: record, recent, get, search, purge."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, Field, field_validator

from mnemonite.errors import InvalidInputError, MemoryScopeError
from mnemonite.models import Episode
from mnemonite.models.base import Model
from mnemonite.models.conflict import PurgeRecord
from mnemonite.models.fact import MemoryType
from mnemonite.models.search import SearchHit, Tier
from mnemonite.server.verbs import Call, Page, Paged, Verb, page_of
from mnemonite.tiers import SalientEpisode

__all__ = ["VERBS"]

MAX_QUERY = 2000
MAX_K = 200


class ScopeFields(Model):
    """Narrow a call within the key's scope. ``user`` (and ``agent``, for a key bound to one) may only
    repeat the key's own; any other value is 403."""

    user: str | None = None
    agent: str | None = None


class RecentQuery(Paged):
    """The newest episodes; omitting session (and agent) widens the read."""

    user: str | None = None
    agent: str | None = None
    session: str | None = None


class SalientQuery(Model):
    """The most salient episodes of the scope (recency of use, relevance, importance), best first."""

    user: str | None = None
    agent: str | None = None
    session: str | None = None
    limit: int = Field(default=10, ge=1, le=100)


class EpisodeBatch(Model):
    """Several episodes, stored in one transaction (all or none)."""

    episodes: list[Episode] = Field(min_length=1, max_length=1000)

    @field_validator("episodes", mode="before")
    @classmethod
    def _each(cls, value: Any) -> Any:
        """Each episode checked on its own, so that an error names which (``episodes.3.content: ...``)."""
        if not isinstance(value, list):
            return value
        checked = []
        for index, item in enumerate(value):
            try:
                checked.append(item if isinstance(item, Episode) else Episode.model_validate(item))
            except InvalidInputError as error:
                raise InvalidInputError(f"episodes.{index}.{str(error).removeprefix('invalid Episode: ')}") from None
        return checked


class Inserted(Model):
    """How many of the episodes were new (an identical episode stored again counts as none)."""

    inserted: int


class EpisodeSearch(ScopeFields):
    """Hybrid search over the scope's episodes."""

    query: str = Field(min_length=1, max_length=MAX_QUERY)
    k: int = Field(default=10, ge=1, le=MAX_K)
    session: str | None = None
    since: AwareDatetime | None = None
    until: AwareDatetime | None = None


class SearchBody(EpisodeSearch):
    """Hybrid search over episodes and facts, each hit with why it ranked where it did."""

    tiers: tuple[Tier, ...] = Field(default=("episodic", "semantic"), min_length=1)
    memory_types: tuple[MemoryType, ...] | None = None
    tags: tuple[str, ...] | None = None
    as_of: AwareDatetime | None = None
    facts_stand_in: bool = Field(
        default=True, description="a fact stands in for the episodes it was read from (false: return both)"
    )
    current_first: bool = Field(
        default=True,
        description="a turn whose facts were all superseded since comes below what replaced them (false: where it"
        " scored; its hit says superseded either way)",
    )
    newer_first: Literal["facts", "all", "off"] = Field(
        default="facts",
        description="a fact stated later on the same subject takes the place of one ranked above it ('all': turns"
        " too; 'off': where they scored)",
    )


class PurgeBody(Model):
    """Why a record is removed for good (kept in the audit log, without any text)."""

    reason: str = Field(min_length=1, max_length=1000)
    derived: bool = False


def _owned(call: Call[Any], episode: Episode, where: str = "") -> Episode:
    """The episode under the caller's scope: a user or agent it carries must be the key's own; a session, and an
    agent unless the key is bound to one, are fields the body must hold (``where``: the body's path to it)."""
    scope = call.who.scope(user=episode.user, agent=episode.agent)
    missing = [name for name, value in (("session", episode.session), ("agent", scope.agent)) if value is None]
    if missing:
        why = {"session": "the conversation it belongs to", "agent": "this API key is bound to no agent"}
        raise MemoryScopeError("; ".join(f"{where}{name}: required ({why[name]})" for name in missing))
    return episode.in_scope(scope.user, None, scope.agent)


async def record(call: Call[Episode]) -> Episode:
    """Store one episode (an event: a message, an observation) under the key's user; session and agent
    come from the episode (the agent from the key when it is bound to one)."""
    return await call.mem.episodic.put(_owned(call, call.body))


async def record_many(call: Call[EpisodeBatch]) -> Inserted:
    """Store many episodes in one transaction: all of them or none."""
    batch = [_owned(call, episode, f"episodes.{i}.") for i, episode in enumerate(call.body.episodes)]
    return Inserted(inserted=await call.mem.episodic.put_many(batch))


async def recent(call: Call[RecentQuery]) -> Page[Episode]:
    """The newest episodes of the scope, newest first (paged)."""
    q = call.body
    scope = call.who.scope(user=q.user, agent=q.agent, session=q.session)
    episodes = await call.mem.episodic.recent(scope, limit=q.offset + q.limit + 1)
    return page_of(episodes, q)


async def salient(call: Call[SalientQuery]) -> list[SalientEpisode]:
    """The scope's most salient episodes with their scores in [0, 1], best first."""
    q = call.body
    return await call.mem.episodic.salient(call.who.scope(user=q.user, agent=q.agent, session=q.session), limit=q.limit)


async def get(call: Call[None]) -> Episode:
    """One episode of the scope by id."""
    return await call.who.episode(call.mem, call.ids["episode_id"])


async def search_episodes(call: Call[EpisodeSearch]) -> list[SearchHit]:
    """Hybrid (full-text and vector) search over the scope's episodes, best first."""
    q = call.body
    scope = call.who.scope(user=q.user, agent=q.agent, session=q.session)
    return await call.mem.episodic.search(scope, q.query, q.k, since=q.since, until=q.until)


async def purge(call: Call[PurgeBody]) -> PurgeRecord:
    """Remove an episode for good (a privacy request), with its vector and full-text rows; with
    ``derived`` the facts promoted from it go too."""
    episode = await call.who.episode(call.mem, call.ids["episode_id"])
    return await call.mem.episodic.purge(episode.id, reason=call.body.reason, derived=call.body.derived)


async def search(call: Call[SearchBody]) -> list[SearchHit]:
    """Hybrid search over the scope's episodes and facts, best first; each hit says how it ranked
    (full-text rank and score, vector rank and cosine, fused score, salience)."""
    q = call.body
    scope = call.who.scope(user=q.user, agent=q.agent, session=q.session)
    # What the request says, over the memory's configured search options (not over the defaults).
    asked: dict[str, Any] = {
        name: getattr(q, name)
        for name in ("facts_stand_in", "current_first", "newer_first")
        if name in q.model_fields_set
    }
    options = call.mem.config.search.model_copy(update=asked) if asked else None
    return await call.mem.search(
        scope, q.query, q.k, tiers=q.tiers, memory_types=q.memory_types, tags=q.tags, since=q.since,
        until=q.until, as_of=q.as_of, options=options,
    )  # fmt: skip


VERBS: tuple[Verb, ...] = (
    Verb("episodic", "episodic.record", "POST", "/v1/episodes", "write", record, Episode, body=Episode, status=201),
    Verb("episodic", "episodic.record_many", "POST", "/v1/episodes/batch", "write", record_many, Inserted,
         body=EpisodeBatch, status=201),
    Verb("episodic", "episodic.recent", "GET", "/v1/episodes", "read", recent, Page[Episode], query=RecentQuery),
    Verb("episodic", "episodic.search", "POST", "/v1/episodes/search", "read", search_episodes, list[SearchHit],
         body=EpisodeSearch),
    Verb("episodic", "episodic.salient", "GET", "/v1/episodes/salient", "read", salient, list[SalientEpisode],
         query=SalientQuery),
    Verb("episodic", "episodic.get", "GET", "/v1/episodes/{episode_id}", "read", get, Episode),
    Verb("episodic", "episodic.purge", "POST", "/v1/episodes/{episode_id}/purge", "admin", purge, PurgeRecord,
         body=PurgeBody),
    Verb("search", "search", "POST", "/v1/search", "read", search, list[SearchHit], body=SearchBody),
)  # fmt: skip
