"""Classification follows the spec's table exactly."""

from __future__ import annotations

from datetime import UTC, datetime

from conftest import ep
from mnemonite import AddDelta, ConsolidationRule, DeleteDelta, Episode, NoopDelta, UpdateDelta
from mnemonite.consolidation.classify import classify

RULE = ConsolidationRule(id="nightly", then_emits=["facts", "profile"])
NOW = datetime(2025, 6, 1, tzinfo=UTC)


def scoped(*episodes: Episode, user: str = "u", agent: str = "a") -> list[Episode]:
    return [e.model_copy(update={"user": user, "session": "s", "agent": agent}) for e in episodes]


def test_the_four_rows_of_the_table() -> None:
    deltas = classify(
        RULE,
        scoped(
            ep("n", intent="noop"),
            ep("d", intent="delete", replaces=["f1"]),
            ep("u", intent="update", replaces=["f2"]),
            ep("a"),
        ),
        NOW,
    )
    assert [type(d) for d in deltas] == [NoopDelta, DeleteDelta, UpdateDelta, AddDelta]
    assert deltas[1].replaces == ["f1"]  # type: ignore[union-attr]
    assert deltas[2].replaces == ["f2"]  # type: ignore[union-attr]
    assert all(d.rule_id == "nightly" and d.promotion_ts == NOW for d in deltas)
    assert [d.source_episode_ids for d in deltas] == [["n"], ["d"], ["u"], ["a"]]


def test_intra_batch_subject_predicate_repeat_becomes_update_of_prior_episode() -> None:
    deltas = classify(
        RULE,
        scoped(
            ep("e1", minutes=0, subject="Bob", predicate="works at", object="Acme"),
            ep("e2", minutes=1, subject="bob", predicate="Works  at", object="Initech"),
            ep("e3", minutes=2, subject="Bob", predicate="works at", object="Globex"),
        ),
        NOW,
    )
    assert isinstance(deltas[0], AddDelta)
    assert isinstance(deltas[1], UpdateDelta) and deltas[1].replaces == ["e1"]
    assert isinstance(deltas[2], UpdateDelta) and deltas[2].replaces == ["e2"]


def test_repeat_is_looked_for_within_one_user_and_agent() -> None:
    batch = scoped(ep("a1", subject="x", predicate="p"), user="alice") + scoped(
        ep("b1", subject="x", predicate="p"), user="bob"
    )
    batch += scoped(ep("a2", subject="x", predicate="p"), user="alice", agent="other")
    assert all(isinstance(d, AddDelta) for d in classify(RULE, batch, NOW))


def test_subject_without_predicate_is_a_plain_add() -> None:
    deltas = classify(RULE, scoped(ep("e1", subject="x"), ep("e2", subject="x")), NOW)
    assert all(isinstance(d, AddDelta) for d in deltas)


def test_payload_carries_text_scope_triple_world_time_and_channels() -> None:
    (delta,) = classify(
        RULE,
        scoped(
            ep("e1", "Bob works at Acme", minutes=5, subject="Bob", predicate="works at", object="Acme", confidence=0.7)
        ),
        NOW,
    )
    assert isinstance(delta, AddDelta)
    assert delta.confidence == 0.7
    payload = delta.fact_payload
    assert payload["text"] == "Bob works at Acme"
    assert (payload["user"], payload["agent"]) == ("u", "a")
    assert (payload["subject"], payload["predicate"], payload["object"]) == ("Bob", "works at", "Acme")
    assert payload["valid_from"] == ep("x", minutes=5).timestamp
    assert payload["channels"] == ["facts", "profile"]


def test_noop_and_delete_do_not_count_as_prior_statements() -> None:
    deltas = classify(
        RULE, scoped(ep("e1", subject="x", predicate="p", intent="noop"), ep("e2", subject="x", predicate="p")), NOW
    )
    assert isinstance(deltas[1], AddDelta)
