"""Row <-> model codecs shared by the SQL stores."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson

from mnemonite._time import from_text, to_text
from mnemonite.conflicts import text_hash
from mnemonite.errors import EpisodeConflictError
from mnemonite.models import DeltaRecord, Episode, Fact, Lineage, parse_delta
from mnemonite.scope import episode_key

EPISODE_COLUMNS = (
    "id, user_id, session_id, agent_id, content, timestamp, source_node, metadata, access_count, last_accessed_at,"
    " sensitivity"
)
FACT_COLUMNS = (
    "id, user_id, agent_id, text, subject, predicate, object, payload, memory_type, status, valid_from, valid_to,"
    " recorded_at, superseded_at, source_episode_ids, rule_id, confidence, promotion_ts, salience, access_count,"
    " last_accessed_at, tags, channels, summary, event_date, event_date_confidence, entity_links, token_count,"
    " summary_token_count, sensitivity"
)
FACT_SELECT = FACT_COLUMNS + ", asserted_valid_to"
DELTA_COLUMNS = (
    "delta_id, kind, rule_id, body, emitted_at, applied_at, fact_id, closed_fact_ids, rejected_at, rejected_reason"
)

Row = Sequence[Any]


def dumps(value: object) -> str:
    return orjson.dumps(value).decode()


def opt_time(value: datetime | None) -> str | None:
    return None if value is None else to_text(value)


def _opt_from(value: str | None) -> datetime | None:
    return None if value is None else from_text(value)


def episode_values(episode: Episode, now: str) -> tuple[Any, ...]:
    """The insert values of an episode that carries its full scope (id, key, user, session, agent, ...)."""
    if episode.user is None or episode.session is None or episode.agent is None:
        episode = episode.in_scope()  # raises MemoryScopeError naming the missing part
    assert episode.user is not None and episode.session is not None and episode.agent is not None
    return (
        episode.id, episode_key(episode.user, episode.session, episode.agent), episode.user, episode.session,
        episode.agent, episode.content, to_text(episode.timestamp), episode.source_node, dumps(episode.metadata), now,
        episode.sensitivity,
    )  # fmt: skip


def check_same_episode(stored: Episode, incoming: Episode) -> None:
    """Putting an id again is a no-op only for the very same episode (content, time, source, scope, metadata).

    An episode put without a time of its own takes "now", which a retry cannot repeat: its time is not compared."""
    if stored.user != incoming.user:  # ids are global: another user's episode is not described, nor compared
        raise EpisodeConflictError(f"episode id {incoming.id!r} is taken: choose another id")
    keep = {"id", "content", "timestamp", "source_node", "user", "session", "agent", "metadata", "sensitivity"}
    if "timestamp" not in incoming.model_fields_set:
        keep.discard("timestamp")
    old, new = stored.model_dump(include=keep), incoming.model_dump(include=keep)
    differ = [name for name in sorted(keep) if old[name] != new[name]]
    if differ:
        raise EpisodeConflictError(f"episode id {incoming.id!r} is already stored with another {', '.join(differ)}")


def episode_from_row(row: Row) -> Episode:
    """An episode read back (``EPISODE_COLUMNS``): validated when it was written, so not again (`Model.trusted`).

    Validating them again cost a search about 0.6 ms of CPU, as much as its BM25 ranking at 100,000
    records (``bench/pg_overhead.py``: the hits' twenty episodes, about 30 microseconds each).
    """
    return Episode.trusted({
        "id": row[0], "content": row[4], "timestamp": from_text(row[5]), "source_node": row[6], "user": row[1],
        "session": row[2], "agent": row[3], "metadata": orjson.loads(row[7]), "access_count": int(row[8]),
        "last_accessed_at": _opt_from(row[9]), "sensitivity": row[10],
    })  # fmt: skip


_FACT_NAMES = [name.strip() for name in FACT_COLUMNS.split(",")]


def fact_from_row(row: Row, as_of: str | None = None) -> Fact:
    """A fact as stored, or, with ``as_of``, as it stood then (closed later = still open then).

    The row carries one extra trailing column, ``asserted_valid_to``, used for the replay.
    """
    values = dict(zip(_FACT_NAMES, row[: len(_FACT_NAMES)], strict=True))
    if as_of is not None and values["superseded_at"] is not None and values["superseded_at"] > as_of:
        values.update(status="active", superseded_at=None, valid_to=row[len(_FACT_NAMES)])
    for key in ("payload", "source_episode_ids", "tags", "channels"):
        values[key] = orjson.loads(values[key])
    for key in ("valid_from", "valid_to", "recorded_at", "superseded_at", "promotion_ts", "last_accessed_at"):
        values[key] = _opt_from(values[key])
    values["event_date"] = _opt_from(values["event_date"])
    values["entities"] = orjson.loads(values.pop("entity_links"))
    values["user"] = values.pop("user_id")
    values["agent"] = values.pop("agent_id")
    return Fact(**values)


def fact_values(fact: Fact, scope_key: str) -> tuple[Any, ...]:
    return (
        fact.id, scope_key, fact.user, fact.agent, fact.text, fact.subject, fact.predicate, fact.object,
        dumps(fact.payload), fact.memory_type, fact.status, to_text(fact.valid_from), opt_time(fact.valid_to),
        to_text(fact.recorded_at), opt_time(fact.superseded_at), dumps(fact.source_episode_ids), fact.rule_id,
        fact.confidence, to_text(fact.promotion_ts), fact.salience, fact.access_count,
        opt_time(fact.last_accessed_at), dumps(fact.tags), dumps(fact.channels), fact.summary,
        opt_time(fact.event_date), fact.event_date_confidence, opt_time(fact.valid_to), text_hash(fact.text),
        dumps([link.model_dump() for link in fact.entities]), fact.token_count, fact.summary_token_count,
        fact.sensitivity,
    )  # fmt: skip


FACT_INSERT = (
    "INSERT INTO facts (id, scope_key, user_id, agent_id, text, subject, predicate, object, payload, memory_type,"
    " status, valid_from, valid_to, recorded_at, superseded_at, source_episode_ids, rule_id, confidence,"
    " promotion_ts, salience, access_count, last_accessed_at, tags, channels, summary, event_date,"
    " event_date_confidence, asserted_valid_to, text_hash, entity_links, token_count, summary_token_count,"
    " sensitivity) VALUES (" + ", ".join(["?"] * 33) + ")"
)


def lineage_from_row(row: Row) -> Lineage:
    return Lineage(new_id=row[0], old_id=row[1], relation=row[2], at=from_text(row[3]))


def delta_record_from_row(row: Row) -> DeltaRecord:
    return DeltaRecord(
        delta_id=row[0],
        kind=row[1],
        rule_id=row[2],
        delta=parse_delta(row[3]),
        emitted_at=from_text(row[4]),
        applied_at=_opt_from(row[5]),
        fact_id=row[6],
        closed_fact_ids=orjson.loads(row[7]),
        rejected_at=_opt_from(row[8]),
        rejected_reason=row[9],
    )
