"""Models validate at the boundary and raise mnemonite's typed errors."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from mnemonite import (
    AddDelta,
    ConsolidationRule,
    ConsolidationRuleError,
    DeleteDelta,
    DeltaValidationError,
    Episode,
    InvalidInputError,
    MnemoniteError,
    NoopDelta,
    Scope,
    UpdateDelta,
    parse_delta,
)
from mnemonite.models.search import SearchFilter

NOW = datetime(2025, 1, 1, tzinfo=UTC)
PROVENANCE: dict[str, Any] = {"source_episode_ids": ["e1"], "promotion_ts": NOW, "rule_id": "r", "confidence": 0.9}


@pytest.mark.parametrize("missing", ["source_episode_ids", "promotion_ts", "rule_id", "confidence"])
@pytest.mark.parametrize("kind", ["add", "update", "delete", "noop"])
def test_provenance_is_mandatory_on_every_delta(kind: str, missing: str) -> None:
    body = {"kind": kind, "fact_payload": {"text": "x"}, "replaces": ["f1"], **PROVENANCE}
    if kind in ("delete", "noop"):
        body.pop("fact_payload")
    if kind in ("add", "noop"):
        body.pop("replaces")
    parse_delta(body)  # complete: accepted
    body.pop(missing)
    with pytest.raises(DeltaValidationError, match=missing):
        parse_delta(body)


@pytest.mark.parametrize("cls", [UpdateDelta, DeleteDelta])
def test_replaces_is_required_and_non_empty(cls: type[UpdateDelta] | type[DeleteDelta]) -> None:
    extra = {"fact_payload": {"text": "x"}} if cls is UpdateDelta else {}
    with pytest.raises(DeltaValidationError, match="replaces"):
        cls(**PROVENANCE, **extra)
    with pytest.raises(DeltaValidationError, match="replaces"):
        cls(replaces=[], **PROVENANCE, **extra)


@pytest.mark.parametrize("confidence", [-0.1, 1.01, float("nan")])
def test_confidence_is_bounded(confidence: float) -> None:
    with pytest.raises(DeltaValidationError):
        NoopDelta(**{**PROVENANCE, "confidence": confidence})


def test_unknown_kind_and_unknown_fields_are_refused() -> None:
    with pytest.raises(DeltaValidationError, match="merge"):
        parse_delta({"kind": "merge", **PROVENANCE})
    with pytest.raises(DeltaValidationError, match="surprise: Extra inputs"):
        parse_delta({"kind": "noop", "surprise": 1, **PROVENANCE})
    with pytest.raises(DeltaValidationError):
        parse_delta("not json")


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(DeltaValidationError, match="timezone"):
        NoopDelta(**{**PROVENANCE, "promotion_ts": datetime(2025, 1, 1)})
    with pytest.raises(InvalidInputError, match="timezone"):
        Episode(content="x", timestamp=datetime(2025, 1, 1))
    with pytest.raises(InvalidInputError, match="timezone"):
        Episode(content="x", metadata={"when": datetime(2025, 1, 1)})


def test_metadata_holds_what_is_stored_and_read_back() -> None:
    episode = Episode(content="x", metadata={"when": NOW, "pair": (1, 2)})
    assert episode.metadata == {"when": "2025-01-01T00:00:00+00:00", "pair": [1, 2]}


def test_delta_round_trips_through_json() -> None:
    delta = AddDelta(fact_payload={"text": "x"}, **PROVENANCE)
    assert parse_delta(delta.model_dump_json()) == delta


@pytest.mark.parametrize(
    "metadata",
    [
        {"intent": "merge"},
        {"intent": "update"},
        {"intent": "delete", "replaces": []},
        {"replaces": [1]},
        {"subject": 3},
        {"confidence": 2},
        {"blob": object()},
    ],
)
def test_invalid_episode_metadata(metadata: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError, match="metadata"):
        Episode(content="x", metadata=metadata)


def test_episode_content_must_not_be_blank() -> None:
    with pytest.raises(InvalidInputError, match="blank"):
        Episode(content=" \n ")


def test_replaces_accepts_a_single_id() -> None:
    assert Episode(content="x", metadata={"intent": "delete", "replaces": "e1"}).metadata["replaces"] == ["e1"]


@pytest.mark.parametrize(
    "cadence",
    [
        {"every": 0},
        {"every": -3},
        {"every": 1.5},
        {"every": True},
        {"cron": "61 * * * *"},
        {"cron": 5},
        {},
        {"every": 1, "cron": "* * * * *"},
        {"hourly": True},
    ],
)
def test_malformed_cadences(cadence: dict[str, Any]) -> None:
    with pytest.raises(ConsolidationRuleError):
        ConsolidationRule(id="r", cadence=cadence)


def test_rule_defaults_to_nightly_batch() -> None:
    rule = ConsolidationRule(id="r")
    assert rule.cadence == {"cron": "0 3 * * *"}
    assert not rule.streaming
    assert ConsolidationRule(id="s", cadence={"every": 1}).streaming


def test_errors_are_mnemonite_errors_not_value_errors() -> None:
    for error in (DeltaValidationError, ConsolidationRuleError, InvalidInputError):
        assert issubclass(error, MnemoniteError)
        assert not issubclass(error, ValueError)


def test_a_tier_named_twice_is_searched_once() -> None:
    flt = SearchFilter(scope=Scope(user="u"), tiers=("semantic", "episodic", "semantic"))
    assert flt.tiers == ("semantic", "episodic")
