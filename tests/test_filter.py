"""when_filter: allow-listed parsing, parameterised compilation, real injection attempts refused."""

from __future__ import annotations

import pytest

from mnemonite import ConsolidationRule, ConsolidationRuleError, Episode, SQLiteMemoryStore
from mnemonite.consolidation.filter import parse_filter

INJECTIONS = [
    "1=1; DROP TABLE episodes",
    "1=1; DELETE FROM facts",
    "id = 'x'; ATTACH DATABASE '/tmp/evil.db' AS evil",
    "ATTACH DATABASE '/tmp/evil.db' AS evil",
    "id IN (SELECT id FROM facts)",
    "EXISTS (SELECT 1 FROM sqlite_master)",
    "(SELECT count(*) FROM episodes) > 0",
    "content = 'a' -- and the rest is a comment",
    "content = 'a' /* comment */",
    "load_extension('/tmp/evil.so') = 1",
    "lower(content) = 'x'",
    "sqlite_master.name = 'episodes'",
    "facts.text = 'x'",
    "content = 'a' UNION SELECT * FROM facts",
    "id = ?",
    "id = :name",
    "content",
    "randomblob(1000000000) = 1",
    "content LIKE 'a' ESCAPE '!'",
    "CAST(content AS INTEGER) = 1",
    'metadata."a\'b" = 1',
    "metadata = '{}'",
]


@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_attempts_are_refused(text: str) -> None:
    with pytest.raises(ConsolidationRuleError):
        ConsolidationRule(id="r", when_filter=text)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("lower(content) = 'x'", "LOWER"),
        ("id IN (SELECT id FROM facts)", "subquery"),
        ("nosuch = 1", "nosuch"),
        ("x = 1; y", "';'"),
        ("x = 1 -- hi", "comments"),
    ],
)
def test_error_names_the_offending_part(text: str, named: str) -> None:
    with pytest.raises(ConsolidationRuleError, match=named):
        parse_filter(text)


@pytest.mark.parametrize(
    "text", ["metadata.n = 99999999999999999999999", "metadata.n = -9223372036854775809", "metadata.n < 1e999"]
)
def test_numbers_no_database_holds_are_refused(text: str) -> None:
    with pytest.raises(ConsolidationRuleError, match=r"64-bit|too large"):
        ConsolidationRule(id="r", cadence={"every": 1}, when_filter=text)


def test_the_64_bit_extremes_are_numbers() -> None:
    assert parse_filter("metadata.n BETWEEN -9223372036854775808 AND 9223372036854775807") is not None


def test_empty_filter_matches_all() -> None:
    assert parse_filter("") is None
    assert parse_filter("   ") is None


async def _ids(store: SQLiteMemoryStore, when: str) -> set[str]:
    deltas = await store.consolidate(ConsolidationRule(id=f"r{abs(hash(when))}", when_filter=when))
    return {d.source_episode_ids[0] for d in deltas}


@pytest.fixture
async def filled(store_on_both: SQLiteMemoryStore) -> SQLiteMemoryStore:
    store = store_on_both
    rows = [
        ("a", "alice", {"intent": "noop"}),
        ("b", "alice", {"n": 5, "tag": "x"}),
        ("c", "bob", {"n": 10}),
        ("d", "bob", {}),
        ("e", "o'brien", {"nested": {"k": "v"}}),
    ]
    for eid, user, meta in rows:
        await store.put(Episode(id=eid, content=f"text {eid}", metadata=meta), user=user, session="s", agent="g")
    return store


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ("metadata.intent != 'noop'", {"b", "c", "d", "e"}),  # a missing key is "not equal"
        ("metadata.intent = 'noop'", {"a"}),
        ("metadata.n > 6", {"c"}),
        ("NOT (metadata.n > 6)", {"a", "b", "d", "e"}),
        ("metadata.n BETWEEN 1 AND 5", {"b"}),
        ("user IN ('bob', 'nobody')", {"c", "d"}),
        ("NOT user IN ('bob')", {"a", "b", "e"}),
        ("user = 'o''brien'", {"e"}),
        ("metadata.nested.k = 'v'", {"e"}),
        ("metadata.tag IS NULL", {"a", "c", "d", "e"}),
        ("NOT metadata.tag IS NULL AND content LIKE 'text%'", {"b"}),
        ("user = 'alice' OR metadata.n = 10", {"a", "b", "c"}),
        ("user = 'x'' OR ''1''=''1'", set()),
    ],
)
async def test_filters_select_what_they_say(filled: SQLiteMemoryStore, when: str, expected: set[str]) -> None:
    assert await _ids(filled, when) == expected


async def test_refused_filter_leaves_database_unchanged(filled: SQLiteMemoryStore) -> None:
    with pytest.raises(ConsolidationRuleError):
        ConsolidationRule(id="evil", when_filter="1=1; DROP TABLE episodes")
    assert (await filled.health()).fragment_count == 5
    assert await filled.rule_states() == []
