"""Classification of episodes into typed deltas (pure: no I/O).

| source                                             | delta                              |
|----------------------------------------------------|------------------------------------|
| ``metadata.intent == "noop"``                      | NoopDelta (audit only)             |
| ``metadata.intent == "delete"`` + ``replaces``     | DeleteDelta                        |
| ``metadata.intent == "update"`` + ``replaces``     | UpdateDelta                        |
| default (no intent, or ``"add"``)                  | AddDelta                           |
| default + earlier (subject, predicate) in batch    | UpdateDelta replacing that episode |

The intra-batch repeat is looked for within one (user, agent), since facts live there,
and the batch is read in episode time order, so the latest statement wins.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from mnemonite.models.deltas import AddDelta, DeleteDelta, MemoryDelta, NoopDelta, UpdateDelta
from mnemonite.models.episode import Episode
from mnemonite.models.rules import ConsolidationRule

__all__ = ["classify"]

_TopicKey = tuple[str, str, str, str]


def classify(rule: ConsolidationRule, episodes: Iterable[Episode], now: datetime) -> list[MemoryDelta]:
    """One delta per episode, in the order given (oldest first)."""
    latest: dict[_TopicKey, str] = {}
    deltas: list[MemoryDelta] = []
    for episode in episodes:
        delta = _classify_one(rule, episode, now, latest)
        topic = _topic(episode)
        if topic is not None and isinstance(delta, AddDelta | UpdateDelta):
            latest[topic] = episode.id
        deltas.append(delta)
    return deltas


def _classify_one(
    rule: ConsolidationRule, episode: Episode, now: datetime, latest: dict[_TopicKey, str]
) -> MemoryDelta:
    meta = episode.metadata
    provenance: dict[str, Any] = {
        "source_episode_ids": [episode.id],
        "promotion_ts": now,
        "rule_id": rule.id,
        "confidence": float(meta.get("confidence", 1.0)),
    }
    intent = meta.get("intent", "add")
    if intent == "noop":
        return NoopDelta(**provenance)
    if intent == "delete":
        return DeleteDelta(replaces=meta["replaces"], **provenance)
    payload = _payload(rule, episode)
    if intent == "update":
        return UpdateDelta(replaces=meta["replaces"], fact_payload=payload, **provenance)
    topic = _topic(episode)
    prior = latest.get(topic) if topic is not None else None
    if prior is not None:
        return UpdateDelta(replaces=[prior], fact_payload=payload, **provenance)
    return AddDelta(fact_payload=payload, **provenance)


def _topic(episode: Episode) -> _TopicKey | None:
    subject, predicate = episode.metadata.get("subject"), episode.metadata.get("predicate")
    if not subject or not predicate:
        return None
    return (episode.user or "", episode.agent or "", _norm(subject), _norm(predicate))


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _payload(rule: ConsolidationRule, episode: Episode) -> dict[str, Any]:
    meta = episode.metadata
    payload: dict[str, Any] = {
        "text": episode.content,
        "user": episode.user,
        "agent": episode.agent,
        "valid_from": episode.timestamp,
        "channels": list(rule.then_emits),
    }
    for key in ("subject", "predicate", "object", "memory_type"):
        if key in meta:
            payload[key] = meta[key]
    return payload
