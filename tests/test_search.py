"""Hybrid search through the public API: real SQLite, FTS5 and the packaged model."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import at, ep
from mnemonite import (
    AddDelta,
    DeleteDelta,
    InvalidInputError,
    Memory,
    MemoryConfig,
    Scope,
    SearchHit,
    SearchOptions,
    UpdateDelta,
)
from mnemonite.models.search import SearchFilter
from mnemonite.search import hybrid
from mnemonite.search.query import without
from mnemonite.store import sqlite

TEXTS = {
    "hike": "I love hiking in the Alps every summer",
    "cat": "My cat is called Milo and sleeps all day",
    "trip": "Let's plan a trip to the Rocky Mountains next July",
    "tax": "The quarterly tax report is due on Friday",
    "bread": "I baked sourdough bread with rye flour",
}


@pytest.fixture
async def filled(memory_url: str) -> AsyncIterator[Memory]:
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    episodes = [
        ep(key, text, minutes=i).model_copy(update={"source_node": "alex"})
        for i, (key, text) in enumerate(TEXTS.items())
    ]
    await mem.episodic.put_many(episodes, user="alex", session="s1", agent="a")
    await mem.episodic.put(ep("other", "mountain hiking trip with friends"), user="alex2", session="s1", agent="a")
    yield mem
    await mem.close()


def ids(hits: list[SearchHit]) -> list[str]:
    return [h.record.id for h in hits]


async def test_full_text_finds_records_before_they_are_embedded(filled: Memory) -> None:
    lagging = SearchOptions(embed_pending=0, embed_head=0)  # as if the scope had too many pending to embed
    hits = await filled.search(Scope(user="alex"), "sourdough", k=3, options=lagging)
    assert ids(hits)[0] == "bread" and hits[0].fulltext_rank == 1 and hits[0].vector_rank is None


async def test_vectors_find_meaning_without_shared_words(filled: Memory) -> None:
    assert await filled.index() == 6
    hits = await filled.search(Scope(user="alex"), "mountain vacation ideas", k=3)
    assert set(ids(hits)[:2]) == {"trip", "hike"}
    best = hits[0]
    assert best.vector_rank == 1 and best.cosine is not None and best.cosine > 0.3
    assert best.score >= hits[1].score >= hits[2].score


async def test_fresh_waits_for_the_indexer(filled: Memory) -> None:
    hits = await filled.search(Scope(user="alex"), "feline pet", k=1, fresh=True)
    assert ids(hits) == ["cat"]


async def test_search_never_crosses_scopes(filled: Memory) -> None:
    await filled.index()
    assert "other" not in ids(await filled.search(Scope(user="alex"), "mountain hiking trip friends", k=10))
    assert ids(await filled.search(Scope(user="alex2"), "mountain hiking trip friends", k=10)) == ["other"]
    assert await filled.search(Scope(user="alex", session="nope"), "hiking", k=10) == []


async def test_time_range_and_tiers(filled: Memory) -> None:
    await filled.index()
    hits = await filled.episodic.search(Scope(user="alex"), "hiking trip mountains", k=10, since=at(2), until=at(3))
    assert ids(hits) == ["trip"]
    assert await filled.search(Scope(user="alex"), "hiking", k=5, tiers=["semantic"]) == []


async def test_facts_are_searched_current_or_as_of(filled: Memory) -> None:
    base = {"source_episode_ids": [], "promotion_ts": datetime.now(UTC), "rule_id": "r", "confidence": 1.0}
    payload = {"user": "alex", "agent": "a", "memory_type": "preference", "tags": ["food"]}
    first = await filled.semantic.apply_delta(
        AddDelta(fact_payload={"text": "Alex likes rye bread", **payload}, **base)
    )
    between = datetime.now(UTC)
    await filled.semantic.apply_delta(
        {
            "kind": "update",
            "replaces": [first.fact_id],
            "fact_payload": {"text": "Alex prefers spelt bread", **payload},
            **base,
        }
    )
    await filled.index()
    now = await filled.semantic.search(Scope(user="alex"), "what bread does alex like", k=5)
    assert [h.record.text for h in now] == ["Alex prefers spelt bread"]  # type: ignore[union-attr]
    then = await filled.semantic.search(Scope(user="alex"), "bread", k=5, as_of=between)
    assert [h.record.text for h in then] == ["Alex likes rye bread"]  # type: ignore[union-attr]
    assert await filled.semantic.search(Scope(user="alex"), "bread", memory_types=["decision"]) == []
    assert len(await filled.semantic.search(Scope(user="alex"), "bread", tags=["food", "x"])) == 1
    both = await filled.search(Scope(user="alex"), "bread", k=10)
    assert {h.tier for h in both} == {"episodic", "semantic"}


async def test_source_named_in_the_query_is_a_boost_not_a_keyword(memory_url: str) -> None:
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    turns = [
        ("mel", "Melanie", "I painted a sunrise over the lake"),
        ("car", "Caroline", "I painted my bedroom walls blue"),
    ]
    await mem.episodic.put_many(
        [ep(i, text).model_copy(update={"source_node": who}) for i, who, text in turns],
        user="u",
        session="s",
        agent="a",
    )
    await mem.index()
    assert ids(await mem.search(Scope(user="u"), "What did Caroline paint?", k=2))[0] == "car"
    assert ids(await mem.search(Scope(user="u"), "What did Melanie paint?", k=2))[0] == "mel"
    await mem.close()


async def test_a_fact_is_boosted_for_the_speakers_of_its_source_turns(memory_url: str) -> None:
    """Provenance carries the source boost to facts: on both backends, a fact whose source turn the
    named speaker said outranks an equally close fact from the other speaker."""
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    turns = [("mel", "Melanie", "I painted a sunrise over the lake"), ("car", "Caroline", "I painted my walls blue")]
    await mem.episodic.put_many(
        [ep(i, text).model_copy(update={"source_node": who}) for i, who, text in turns],
        user="u",
        session="s",
        agent="a",
    )
    base = {"promotion_ts": datetime.now(UTC), "rule_id": "r", "confidence": 1.0}
    facts = {}
    for source, text in (("mel", "Painted a sunrise over the lake"), ("car", "Painted the bedroom walls blue")):
        payload = {"text": text, "user": "u", "agent": "a"}
        applied = await mem.semantic.apply_delta(AddDelta(fact_payload=payload, source_episode_ids=[source], **base))
        facts[source] = applied.fact_id
    await mem.index()
    for name, source in (("Caroline", "car"), ("Melanie", "mel")):
        hits = await mem.search(Scope(user="u", agent="a"), f"What did {name} paint?", k=2, tiers=("semantic",))
        assert ids(hits)[0] == facts[source]
        plain = await mem.search(
            Scope(user="u", agent="a"), f"What did {name} paint?", k=2, tiers=("semantic",),
            options=SearchOptions(source_boost=0.0),
        )  # fmt: skip
        assert {h.record.id: h.score for h in hits}[facts[source]] > {h.record.id: h.score for h in plain}[
            facts[source]
        ]
    await mem.close()


def test_the_names_a_search_boosts_are_taken_out_of_its_query() -> None:
    assert (
        without("What did Caroline's mom and caroline\u2019s dad paint?", ["Caroline"]) == "What did mom and dad paint?"
    )
    assert without("Where does Jo live? Jones knows.", ["Jo"]) == "Where does live? Jones knows."
    assert without("Caroline", ["Caroline"]) == ""


class Reverse:
    async def rerank(self, query: str, hits: list[SearchHit]) -> list[SearchHit]:
        return list(reversed(hits))


async def test_reranker_reorders_the_head(filled: Memory) -> None:
    plain = await filled.search(Scope(user="alex"), "hiking trip mountains", k=2, options=SearchOptions(rerank_depth=2))
    reranked = await filled.search(
        Scope(user="alex"), "hiking trip mountains", k=2, reranker=Reverse(), options=SearchOptions(rerank_depth=2)
    )
    assert ids(reranked) == ids(plain)[::-1] and all(h.reranked for h in reranked)


async def test_salience_weight_prefers_recently_used(filled: Memory) -> None:
    await filled.index()
    await filled.episodic.recent("alex", limit=1)  # touches the newest episode, "bread"
    options = SearchOptions(salience_weight=1.0)
    hits = await filled.search(Scope(user="alex"), "summer food", k=5, options=options)
    assert hits[0].record.id == "bread" and hits[0].salience is not None and hits[0].salience > 0.9


@pytest.mark.parametrize("query", ["", "   ", "\n"])
async def test_empty_queries_are_refused(filled: Memory, query: str) -> None:
    with pytest.raises(InvalidInputError, match="non-empty"):
        await filled.search(Scope(user="alex"), query)


async def test_huge_queries_and_bad_k(filled: Memory) -> None:
    hits = await filled.search(Scope(user="alex"), "sourdough " + "lorem ipsum " * 20_000, k=1, fresh=True)
    assert len(hits) == 1
    with pytest.raises(InvalidInputError, match="k must be"):
        await filled.search(Scope(user="alex"), "x", k=0)
    with pytest.raises(InvalidInputError, match="tiers"):
        await filled.search(Scope(user="alex"), "sourdough", tiers=[])  # nothing to search is a mistake, not []
    assert await filled.search(Scope(user="alex"), '"; DROP TABLE episodes; -- OR NEAR(', k=1) is not None


async def test_a_tier_with_nothing_relevant_is_not_pulled_up_by_feedback(memory_url: str) -> None:
    """Feedback moves a tier's query towards that tier's best hits; a lone, unrelated fact must not be its own
    best evidence (it scored 0.71, near the matching turn, before feedback looked across the tiers)."""
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    try:
        for i, text in enumerate(["I love green tea", "Standup moved to 10:30", "I play tennis on Fridays"]):
            await mem.episodic.put(ep(f"e{i}", text, minutes=i), user="sam", session="s", agent="a")
        await mem.semantic.remember(Scope(user="sam", agent="a"), "I moved to Madrid")
        hits = await mem.search("sam", "which tea do I like", k=4, fresh=True)
        assert hits[0].text == "I love green tea"
        (fact,) = [h for h in hits if h.tier == "semantic"]
        assert fact.cosine is not None and fact.cosine < 0.3 and fact.score < 0.2 * hits[0].score
    finally:
        await mem.close()


async def test_the_best_of_a_few_unrelated_records_is_not_called_a_match(memory_url: str) -> None:
    """In a small memory the best hit may share nothing with the query; feedback moved towards it reported it as a
    match (cosine 0.71 for "I like tea" on "quantum chromodynamics lattice"). A hit feeds back only when the query
    matched it: a word of it, or a close cosine."""
    async with await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False)) as mem:
        scope = Scope(user="sam", agent="a")
        await mem.semantic.remember(scope, "I like tea")
        for query in ("quantum chromodynamics lattice", "window seat"):
            (hit,) = await mem.search(scope, query, k=3)
            assert hit.cosine is not None and hit.cosine < 0.3 and hit.score < 0.3, (query, hit.cosine)
        (hit,) = await mem.search(scope, "tea", k=3)
        assert hit.score > 0.9  # a real match still scores as one


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"fusion": "rrf", "rrf_weights": (-5.0, -1.0)}, "rrf_weights"),  # would reverse the ranking
        ({"source_boost": 1e308}, "source_boost"),  # would overflow the scores
        ({"feedback": 1e308}, "feedback"),
        ({"specificity_weight": 1e300}, "specificity_weight"),
    ],
)
def test_search_weights_out_of_range_are_refused(options: dict[str, Any], named: str) -> None:
    with pytest.raises(InvalidInputError, match=named):
        SearchOptions(**options)


async def test_a_reranker_that_is_not_one_is_refused(filled: Memory) -> None:
    with pytest.raises(InvalidInputError, match="reranker='nope' must be a Reranker"):
        await filled.search(Scope(user="alex"), "sourdough", reranker="nope")  # type: ignore[arg-type]


@pytest.mark.parametrize("memory_url", ["sqlite"], indirect=True)  # PostgreSQL's vector type refuses such rows
async def test_corrupt_vector_rows_are_skipped(
    filled: Memory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await filled.index()
    with sqlite3.connect(tmp_path / "memory.db") as db:
        db.execute("UPDATE vectors SET vector = x'00' WHERE seq = (SELECT seq FROM episodes WHERE id = 'cat')")
    hits = await filled.search(Scope(user="alex"), "feline pet called Milo", k=5)
    assert "cat" in ids(hits)  # still found by full text
    assert "corrupt" in caplog.text


async def test_failed_batch_leaves_nothing_searchable(filled: Memory) -> None:
    with pytest.raises(Exception, match="already stored"):
        await filled.episodic.put_many(
            [ep("new1", "zebra crossing"), ep("cat", "changed")], user="alex", session="s1", agent="a"
        )
    hits = await filled.search(Scope(user="alex"), "zebra", k=10)
    assert "new1" not in ids(hits) and all(h.fulltext_rank is None for h in hits)  # only neighbours by meaning
    assert (await filled.health()).fragment_count == 6


async def test_background_indexing_catches_up(memory_url: str) -> None:
    async with await Memory.open(memory_url) as mem:
        await mem.episodic.put(ep("e1", "The violin lesson is on Tuesday"), user="u", session="s", agent="a")
        await mem.index()  # waits for whatever the background task has not done yet
        hits = await mem.search(Scope(user="u"), "music class schedule", k=1)
        assert hits[0].vector_rank == 1


def test_v1_database_is_upgraded_and_indexed(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    schema = (Path(__file__).parents[1] / "src/mnemonite/store/schema/sqlite/001_base.sql").read_text()
    with sqlite3.connect(path) as db:
        db.executescript(schema)
        db.execute(
            "CREATE TABLE schema_version (kind TEXT, version INTEGER, description TEXT, body TEXT, applied_at TEXT)"
        )
        db.execute("INSERT INTO schema_version VALUES ('base', 1, 'base', NULL, '2025-01-01T00:00:00.000000Z')")
        db.execute(
            "INSERT INTO episodes (id, scope_key, user_id, session_id, agent_id, content, timestamp, source_node,"
            " metadata, recorded_at) VALUES ('old', '/user/u/session/s/agent/a/', 'u', 's', 'a',"
            " 'an archived violin note', '2025-01-01T00:00:00.000000Z', '', '{}', '2025-01-01T00:00:00.000000Z')"
        )
    from mnemonite import SyncMemory

    with SyncMemory.open(f"sqlite:///{path}", config=MemoryConfig(embedder="none")) as mem:
        assert mem.health().schema_version == sqlite.SCHEMA_VERSION
        assert [h.record.id for h in mem.search(Scope(user="u"), "violin")] == ["old"]


async def test_vectors_of_a_v15_database_move_to_a_rowid_table_and_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Schema 16 rebuilds the vectors table as an ordinary one (a WITHOUT ROWID row of 1.5 KiB spilled into an
    overflow page of its own): every vector is kept, nothing waits to be embedded again, and the file shrinks."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    texts = [f"note {n}: the violin lesson moved to room {n}" for n in range(300)]
    async with await Memory.open(url) as mem:
        await mem.episodic.put_many([ep(f"e{n}", t) for n, t in enumerate(texts)], user="alex", session="s", agent="a")
        await mem.index()
        before = await mem.search(Scope(user="alex"), "music class room", k=5)
    with sqlite3.connect(tmp_path / "old.db") as db:  # the table as schema 15 made it
        db.executescript(
            "CREATE TABLE v15 (kind TEXT NOT NULL CHECK (kind IN ('episode', 'fact')), model TEXT NOT NULL,"
            " seq INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (kind, model, seq)) WITHOUT ROWID;"
            " INSERT INTO v15 SELECT * FROM vectors; DROP TABLE vectors; ALTER TABLE v15 RENAME TO vectors;"
            " DELETE FROM schema_version WHERE version = 16;"
        )
        old_pages = db.execute("SELECT count(*) FROM dbstat WHERE name = 'vectors'").fetchone()[0]
        count = db.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert count == 300
    monkeypatch.setattr(sqlite, "VECTORS_MOVE_SAID", 300)  # a large database is told why its first open is slow
    with caplog.at_level(logging.WARNING, logger="mnemonite.store"):
        mem = await Memory.open(url)
    assert "moving 300 stored vectors" in caplog.text
    async with mem:
        assert (await mem.health()).pending_embeddings == 0
        after = await mem.search(Scope(user="alex"), "music class room", k=5)
        assert [(h.record.id, h.cosine) for h in after] == [(h.record.id, h.cosine) for h in before]
    with sqlite3.connect(tmp_path / "old.db") as db:
        sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'vectors'").fetchone()[0]
        assert "WITHOUT ROWID" not in sql
        assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 300
        pages = db.execute("SELECT count(*) FROM dbstat WHERE name = 'vectors'").fetchone()[0]
    assert pages < old_pages / 2  # about 2 KiB a vector against 4.6


async def test_since_until_accept_aware_datetimes_only(filled: Memory) -> None:
    with pytest.raises(InvalidInputError, match="timezone"):
        await filled.search(Scope(user="alex"), "x", since=datetime(2025, 1, 1))
    assert await filled.search(Scope(user="alex"), "hiking", since=at(0) + timedelta(days=999)) == []


async def test_vector_recall_with_threshold_and_model(filled: Memory) -> None:
    await filled.index()
    vectors_only = SearchOptions(use_fulltext=False, min_cosine=0.35, neighbour_weight=0.0, feedback=0.0)
    hits = await filled.search(Scope(user="alex"), "mountain vacation ideas", k=10, options=vectors_only)
    assert hits and all(h.cosine is not None and h.cosine >= 0.35 for h in hits)
    assert len(hits) < len(TEXTS)
    nobody = vectors_only.model_copy(update={"models": ("some-other-model",)})
    assert await filled.search(Scope(user="alex"), "mountain vacation ideas", k=10, options=nobody) == []


async def test_cached_vectors_never_resurrect_a_superseded_fact(filled: Memory) -> None:
    base = {"source_episode_ids": [], "promotion_ts": datetime.now(UTC), "rule_id": "r", "confidence": 1.0}
    old = await filled.semantic.apply_delta(
        AddDelta(fact_payload={"text": "Alex lives in Lyon", "user": "alex", "agent": "a"}, **base)
    )
    await filled.index()
    assert [h.record.id for h in await filled.semantic.search(Scope(user="alex"), "city of residence")] == [old.fact_id]
    update = {"kind": "update", "replaces": [old.fact_id], **base}
    new = await filled.semantic.apply_delta(
        {**update, "fact_payload": {"text": "Alex lives in Nantes", "user": "alex", "agent": "a"}}
    )
    hits = await filled.semantic.search(Scope(user="alex"), "city of residence lives")  # new fact not embedded yet
    assert [h.record.id for h in hits] == [new.fact_id]
    await filled.index()
    hits = await filled.semantic.search(Scope(user="alex"), "city of residence")
    assert [h.record.id for h in hits] == [new.fact_id] and hits[0].vector_rank is not None


@pytest.mark.parametrize("memory_url", ["sqlite"], indirect=True)  # PostgreSQL: pgvector's index (test below)
async def test_approximate_index_agrees_with_exact_search(filled: Memory, caplog: pytest.LogCaptureFixture) -> None:
    await filled.index()
    exact = SearchOptions(ann_min_rows=None)
    approximate = SearchOptions(ann_min_rows=1)
    alex = Scope(user="alex")
    with caplog.at_level(logging.INFO, logger="mnemonite.search"):
        # The first search is exact while a worker thread builds the graph; fresh=True waits for it.
        for query in ("mountain vacation ideas", "pets at home", "money and deadlines"):
            want = await filled.search(alex, query, k=3, options=exact)
            assert ids(await filled.search(alex, query, k=3, options=approximate)) == ids(want)
            assert ids(await filled.search(alex, query, k=3, options=approximate, fresh=True)) == ids(want)
    assert sum("building an approximate index" in r.message for r in caplog.records) == 1
    await filled.episodic.put(ep("late", "a ski holiday in the mountains"), user="alex", session="s1", agent="a")
    await filled.index()  # the approximate index grows with the new row
    assert "late" in ids(await filled.search(alex, "mountain vacation", k=3, options=approximate))


@pytest.mark.parametrize("memory_url", ["sqlite"], indirect=True)
async def test_concurrent_searches_of_a_new_user_read_each_row_once(
    filled: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    """Searches that arrive together on a user nobody searched yet read the rows in once and build one graph."""
    await filled.index()
    alex, approximate = Scope(user="alex"), SearchOptions(ann_min_rows=1)
    want = ids(await filled.search(alex, "pets at home", k=3, options=SearchOptions(ann_min_rows=None)))
    filled._engine._users.drop(lambda key: False)  # as after opening the memory again
    with caplog.at_level(logging.INFO, logger="mnemonite.search"):
        found = await asyncio.gather(
            *[filled.search(alex, "pets at home", k=3, options=approximate) for _ in range(16)]
        )
        assert ids(await filled.search(alex, "pets at home", k=3, options=approximate, fresh=True)) == want
    assert all(ids(hits) == want for hits in found)
    assert sum("building an approximate index" in r.message for r in caplog.records) == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    index = filled._engine._users.get(("episode", "alex"), lambda: None)
    seqs = next(iter(index.vectors.values())).seqs.view
    assert len(seqs) == len(set(seqs.tolist()))  # no row read in twice


async def test_narrower_scopes_and_new_rows_after_the_user_is_cached(filled: Memory) -> None:
    await filled.index()
    assert ids(await filled.search(Scope(user="alex"), "hiking", k=1)) == ["hike"]  # the user's index is built
    await filled.episodic.put(ep("s2", "hiking boots bought today"), user="alex", session="s2", agent="b")
    assert ids(await filled.search(Scope(user="alex", session="s2"), "hiking", k=10)) == ["s2"]  # by its words
    await filled.index()
    assert ids(await filled.search(Scope(user="alex", agent="b"), "mountains in summer", k=10)) == ["s2"]
    assert "s2" not in ids(await filled.search(Scope(user="alex", session="s1"), "hiking boots", k=10))
    assert "s2" in ids(await filled.search(Scope(user="alex"), "hiking boots", k=2))


async def test_fts5_lexical_option_ranks_like_the_in_memory_index(filled: Memory) -> None:
    words_only = {"use_vectors": False, "neighbour_weight": 0.0}
    for query in ("sourdough rye", "tax report Friday", "hiking summer"):
        memory = await filled.search(Scope(user="alex"), query, k=2, options=SearchOptions(**words_only))
        fts5 = await filled.search(Scope(user="alex"), query, k=2, options=SearchOptions(lexical="fts5", **words_only))
        assert ids(memory) == ids(fts5) and len(memory) >= 1


async def test_new_rows_join_the_graphs_without_changing_results(
    filled: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hybrid, "ANN_BATCH", 1)
    exact, approximate = SearchOptions(ann_min_rows=None), SearchOptions(ann_min_rows=1)
    alex = Scope(user="alex")
    await filled.search(alex, "hiking", options=approximate, fresh=True)  # the main graph over 5 rows
    more = ["ski holiday in the mountains", "my cat Milo caught a mouse", "sourdough starter recipe"]
    for i, text in enumerate(more):  # a new row: searched exactly, then a second graph; the next: all rebuilt
        await filled.episodic.put(ep(f"r{i}", text, minutes=10 + i), user="alex", session="s1", agent="a")
        await filled.index()
        for query in ("mountain vacation ideas", "pets at home", "baking bread"):
            want = ids(await filled.search(alex, query, k=3, options=exact))
            assert ids(await filled.search(alex, query, k=3, options=approximate)) == want
            assert ids(await filled.search(alex, query, k=3, options=approximate, fresh=True)) == want


async def test_postgres_ranks_vectors_with_its_hnsw_index(postgres_url: str) -> None:
    """The engine asks pgvector's HNSW index for candidates; a narrow filter falls back to an exact ranking."""
    import numpy as np
    import psycopg

    from mnemonite.models.search import SearchFilter
    from mnemonite.store import sql_search
    from mnemonite.store.postgres import PostgresMemoryStore

    store = PostgresMemoryStore(postgres_url)
    await store.bootstrap()
    try:
        dims, n = 32, 3000
        await store.set_embedder("toy", dims, "active")
        users = ["many"] * (n - 5) + ["few"] * 5
        await store.put_many([ep(f"e{i}", f"text {i}").in_scope(u, "s", "a") for i, u in enumerate(users)])
        gen = np.random.default_rng(3)
        matrix = gen.standard_normal((n, dims)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        await store.save_vectors("episode", "toy", list(range(1, n + 1)), matrix, upto=n)
        query = matrix[7] + 0.1 * gen.standard_normal(dims).astype(np.float32)
        query /= np.linalg.norm(query)
        many = SearchFilter(scope=Scope(user="many"))
        found = await store.nearest_rows("episode", "toy", dims, many, query, 10)
        exact = np.argsort(-(matrix[: n - 5] @ query))[:10] + 1
        assert len(set(found) & set(exact.tolist())) >= 9  # approximate, but close
        assert max(found, key=lambda seq: found[seq]) == 8
        assert found[8] == pytest.approx(float(matrix[7] @ query), abs=1e-5)
        few = await store.nearest_rows("episode", "toy", dims, SearchFilter(scope=Scope(user="few")), query, 10)
        assert sorted(few) == list(range(n - 4, n + 1))  # all five, though the index's neighbours are elsewhere
        # Feedback on the server: cosines with the query moved towards the mean of two rows, as numpy computes them.
        moved = query + 0.5 * matrix[[2, 9]].mean(axis=0)
        moved /= np.linalg.norm(moved)
        rescored = await store.rescored("episode", "toy", dims, [1, 5, 8, n], query, [3, 10], 0.5)
        assert sorted(rescored) == [1, 5, 8, n]
        for seq, cosine in rescored.items():
            assert cosine == pytest.approx(float(matrix[seq - 1] @ moved), abs=1e-5)
        unmoved = await store.rescored("episode", "toy", dims, [8, 10**9], query, [10**9], 0.5)  # no such rows
        assert unmoved == {8: pytest.approx(float(matrix[7] @ query), abs=1e-5)}
        clause, params = sql_search.where(None, "episode", many)  # type: ignore[arg-type]
        by_index, _ = sql_search.nearest_sql("episode", "toy", dims, clause)
        with psycopg.connect(postgres_url) as db:
            db.execute("SET enable_seqscan = off")  # a table this small would be scanned; the index must fit
            plan = db.execute(
                "EXPLAIN " + by_index.replace("?", "%s"),  # type: ignore[arg-type]
                (str(query.tolist()), *params, str(query.tolist()), 10),
            ).fetchall()
        assert sql_search.hnsw_index("episode", "toy") in " ".join(row[0] for row in plan)
    finally:
        await store.close()


async def test_postgres_search_agrees_with_sqlite_and_rescores_full_text_hits_too(
    tmp_path: Path, postgres_url: str
) -> None:
    """Same memory, same hits, scores and cosines on both backends; on PostgreSQL the feedback pass
    (computed on the server) rescores BM25 hits that are not among the nearest vectors too."""
    import random

    from mnemonite.embedding.base import embed_query
    from mnemonite.models.search import SearchFilter

    rng = random.Random(7)
    verbs = ["cooked", "painted", "fixed", "cleaned", "sold", "bought", "photographed", "planted"]
    things = ["pasta", "the fence", "a bicycle", "tomatoes", "the kitchen", "an old piano", "roses", "the car"]
    places = ["at home", "in the garden", "downtown", "at the lake", "in Berlin", "on Sunday", "with Sam", "for Ana"]
    every = [f"I {verb} {thing} {place}" for verb in verbs for thing in things for place in places]
    texts = rng.sample(every, 300)  # no two alike: equal scores would tie
    options = SearchOptions(candidates=10)
    query = "dinner recipes with pasta"
    results = []
    for url in (f"sqlite:///{tmp_path / 'memory.db'}", postgres_url):
        async with await Memory.open(config=MemoryConfig(url=url, index_in_background=False)) as mem:
            episodes = [ep(f"e{i}", text, minutes=i) for i, text in enumerate(texts)]
            await mem.episodic.put_many(episodes, user="u", session="s", agent="a")
            assert await mem.index() == len(texts)
            results.append(await mem.search(Scope(user="u"), query, k=20, options=options))
            engine = mem._engine
            assert engine.active is not None
            vector = await embed_query(engine.active, query)
            flt = SearchFilter(scope=Scope(user="u"), tiers=("episodic",))
            nearest = {record.id for record, _ in await engine.nearest("episode", flt, vector, 10)}
    lite, pg = results
    assert ids(pg) == ids(lite)
    for ours, theirs in zip(pg, lite, strict=True):
        assert ours.cosine == pytest.approx(theirs.cosine, abs=1e-5)
        assert ours.score == pytest.approx(theirs.score, abs=1e-5)
    text_only = [hit for hit in pg if hit.fulltext_rank is not None and hit.record.id not in nearest]
    assert text_only and all(hit.cosine is not None for hit in text_only)


async def test_session_settings_are_sent_once_per_connection_and_only_kept_outside_transactions(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    from mnemonite.store.sql import PgConnection

    sent: list[str] = []
    execute = PgConnection.execute

    async def spy(self: PgConnection, sql: str, parameters: object = (), **kwargs: object) -> object:
        sent.append(sql)
        return await execute(self, sql, parameters, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(PgConnection, "execute", spy)  # every wrapper's statements are counted
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as raw:
        db = PgConnection(raw)
        show = "SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan')"
        await db.set_session({"hnsw.ef_search": "77", "hnsw.iterative_scan": "relaxed_order"})
        assert await (await raw.execute(show)).fetchone() == ("77", "relaxed_order")
        await PgConnection(raw).set_session({"hnsw.ef_search": "77"})  # another wrapper, the same connection
        await db.set_session({"hnsw.ef_search": "77", "hnsw.iterative_scan": "relaxed_order"})
        assert len(sent) == 1  # held already: nothing sent
        await db.set_session({"hnsw.ef_search": "90", "hnsw.iterative_scan": "relaxed_order"})
        assert len(sent) == 2 and await (await raw.execute(show)).fetchone() == ("90", "relaxed_order")
        async with raw.transaction(force_rollback=True):  # undone by the rollback, so not remembered
            await db.set_session({"hnsw.ef_search": "55"})
        assert await (await raw.execute(show)).fetchone() == ("90", "relaxed_order")
        await db.set_session({"hnsw.ef_search": "55"})
        assert len(sent) == 4 and await (await raw.execute(show)).fetchone() == ("55", "relaxed_order")


async def test_pooled_connections_plan_each_statement_for_its_own_values(postgres_url: str) -> None:
    """Never a generic plan: the best plan of a scope's read depends on the pattern and range it is given."""
    from mnemonite.store.postgres import PostgresMemoryStore

    store = PostgresMemoryStore(postgres_url, pool_size=2)
    await store.bootstrap()
    try:
        async with store._read() as first, store._read() as second:  # a second connection is opened for this
            for db in (first, second):
                assert await (await db.execute("SHOW plan_cache_mode")).fetchone() == ("force_custom_plan",)
    finally:
        await store.close()


async def test_queries_take_the_embedders_query_path_unless_told_not_to(
    filled: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mnemonite.embedding import OnnxEmbedder

    calls: list[str] = []
    for name in ("embed", "embed_query"):
        original = getattr(OnnxEmbedder, name)

        async def spy(self: OnnxEmbedder, text: str, _name: str = name, _original: object = original) -> object:
            calls.append(_name)
            return await _original(self, text)  # type: ignore[operator]

        monkeypatch.setattr(OnnxEmbedder, name, spy)
    scope = Scope(user="alex")
    fast = await filled.search(scope, "a holiday in the mountains", k=2, fresh=True)
    assert calls == ["embed_query"]
    exact = await filled.search(scope, "a holiday in the mountains", k=2, options=SearchOptions(query_path=False))
    assert calls == ["embed_query", "embed"]
    assert ids(fast) == ids(exact) == ["trip", "hike"]


async def test_a_fact_stands_in_for_the_turns_it_was_read_from(memory_url: str) -> None:
    """Searching episodes and facts, a turn and a fact read from it come back once, as the fact, at the
    better of their two places; ``facts_stand_in=False`` returns both. Runs on both backends."""
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    turns = [
        ("t1", "Jo: I moved to Munich last month, the flat is near the river"),
        ("t2", "Jo: my sister still lives in Hamburg"),
        ("t3", "Jo: the weather in Munich has been grey all week"),
    ]
    await mem.episodic.put_many([ep(i, text) for i, text in turns], user="u", session="s", agent="a")
    base = {"promotion_ts": datetime.now(UTC), "rule_id": "r", "confidence": 1.0}
    payload = {"text": "Jo lives in Munich", "user": "u", "agent": "a"}
    fact = (await mem.semantic.apply_delta(AddDelta(fact_payload=payload, source_episode_ids=["t1"], **base))).fact_id
    await mem.index()
    scope, question = Scope(user="u", agent="a"), "Where did Jo move to? Munich"
    both = await mem.search(scope, question, k=4, options=SearchOptions(facts_stand_in=False))
    assert {"t1", fact} <= set(ids(both))
    hits = await mem.search(scope, question, k=4)
    assert "t1" not in ids(hits) and fact in ids(hits)
    best = min(ids(both).index("t1"), ids(both).index(fact))
    assert ids(hits)[best] == fact and hits[best].score == both[best].score
    assert [i for i in ids(hits) if i != fact] == [i for i in ids(both) if i not in (fact, "t1")][: len(hits) - 1]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # One tier searched alone: nothing to stand in for.
    assert "t1" in ids(await mem.search(scope, question, k=4, tiers=("episodic",)))
    await mem.close()


async def test_a_turn_whose_facts_were_all_superseded_comes_below_what_replaced_them(memory_url: str) -> None:
    """An episode every fact of which was superseded or forgotten since says so; it is placed just below the
    first of its replacements among the hits (the fact down the SUPERSEDES chain, or the turn that fact was read
    from); one with a current fact, or none, is untouched; ``as_of`` judges by the facts as they stood then."""
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    turns = [
        ("veg", "Jo: I'm vegetarian, so please keep dinner ideas for Jo meat-free, what should Jo eat"),
        ("fish", "Jo: I eat fish again now"),
        ("both", "Jo: dinner with my sister on Fridays, she is vegetarian too"),
        ("none", "Jo: dinner plans for the weekend are still open"),
    ]
    await mem.episodic.put_many([ep(i, text) for i, text in turns], user="u", session="s", agent="a")
    base = {"promotion_ts": datetime.now(UTC), "rule_id": "r", "confidence": 1.0}

    async def add(text: str, source: str) -> str:
        payload = {"text": text, "user": "u", "agent": "a"}
        delta = AddDelta(fact_payload=payload, source_episode_ids=[source], **base)
        return (await mem.semantic.apply_delta(delta)).fact_id

    async def update(old: str, text: str, source: str) -> str:
        payload = {"text": text, "user": "u", "agent": "a"}
        delta = UpdateDelta(replaces=[old], fact_payload=payload, source_episode_ids=[source], **base)
        return (await mem.semantic.apply_delta(delta)).fact_id

    diet = await add("Jo is vegetarian", "veg")
    sister = await add("Jo's sister is vegetarian", "both")
    dinners = await add("Jo has dinner with the sister on Fridays", "both")
    before = datetime.now(UTC)
    diet2 = await update(diet, "Jo is vegetarian most days", "veg")  # read from the same turn again, then replaced
    current = await update(diet2, "Jo eats fish", "fish")  # two steps down the chain from the turn's first fact
    await mem.semantic.apply_delta(DeleteDelta(replaces=[sister], source_episode_ids=["both"], **base))
    await mem.index()
    scope, question = Scope(user="u", agent="a"), "what should Jo eat for dinner, vegetarian"

    async def search(tiers: tuple[str, ...], **options: object) -> list[tuple[str, bool]]:
        found = await mem.search(scope, question, k=8, tiers=tiers, options=SearchOptions(**options))  # type: ignore[arg-type]
        assert [h.score for h in found] == sorted((h.score for h in found), reverse=True)
        return [(h.record.id, h.superseded) for h in found]

    def moved(hits: list[tuple[str, bool]], replacements: set[str]) -> list[tuple[str, bool]]:
        """``hits`` with "veg" just below the first of ``replacements`` ranked under it, unless one ranks above."""
        at = hits.index(("veg", True))
        if any(i in replacements for i, _ in hits[:at]):
            return hits
        below = next(i for i in range(at + 1, len(hits)) if hits[i][0] in replacements)
        return [*hits[:at], *hits[at + 1 : below + 1], ("veg", True), *hits[below + 1 :]]

    episodic = ("episodic",)
    plain = await search(episodic, current_first=False)
    assert plain[0] == ("veg", True) and {i for i, flag in plain if flag} == {"veg"}  # "both" keeps a current fact
    assert await search(episodic) == moved(plain, {"fish"})  # below the turn its last fact was read from
    # What replaced the turn's facts: the facts down the chain (the turn's own second reading too), their turns.
    stored = await mem._store.records(
        "episode", (await mem._store.selected("episode", SearchFilter(scope=scope))).tolist()
    )
    seqs = {record.id: seq for seq, record in stored.items()}
    replaced = await mem._store.superseded_episodes(list(seqs.values()))
    assert replaced == {seqs["veg"]: ({diet2, current}, {"veg", "fish"})}
    mixed = await search(("episodic", "semantic"), facts_stand_in=False, current_first=False)
    assert await search(("episodic", "semantic"), facts_stand_in=False) == moved(mixed, {diet2, current, "fish"})
    # As of before the updates, the vegetarian fact still held: the turn is where it scored, and says nothing.
    then = await mem.search(scope, question, k=8, tiers=episodic, as_of=before)
    assert [(h.record.id, h.superseded) for h in then] == [(i, False) for i, _ in plain]
    # Every way of reading turns says so: by id, routed retrieval (the newest turns too), recall and its tool.
    ids = [i for i, _ in turns]
    assert await mem._store.superseded_among(ids) == {"veg"} and not await mem._store.superseded_among(ids, before)
    newest = await mem.retrieve(scope, "what did we talk about last time?")
    assert newest.route == "sequential" and {h.record.id for h in newest.hits if h.superseded} == {"veg"}
    assert {h.record.id for h in newest.hits} == set(ids)
    routed = (await mem.retrieve(scope, question, 4, route="multihop")).hits
    assert {h.record.id: h.superseded for h in routed}.get("veg") is True
    recalled = {item.episode.id: item.superseded for item in await mem.episodic.recall(scope, question, k=4)}
    assert recalled == {"veg": True, "fish": False, "both": False, "none": False}
    told = (await mem.tools.for_scope(scope).call("recall_episodes", {"query": question, "k": 4})).output
    assert told is not None and {e["id"]: e["superseded"] for e in told["episodes"]} == recalled
    # Its last fact forgotten (nothing replaced it), a turn says so and stays where it scored.
    await mem.semantic.apply_delta(DeleteDelta(replaces=[dinners], source_episode_ids=["both"], **base))
    assert ("both", True) in await search(episodic)
    await mem.close()


def test_current_first_moves_a_replaced_turn_just_below_its_first_replacement_under_it() -> None:
    from mnemonite.search.hybrid import current_first

    hits = [
        SearchHit(record=ep(i), tier="episodic", score=score)
        for i, score in zip("abcdef", (9, 8, 7, 6, 5, 4), strict=True)
    ]

    def run(replaced: dict[str, set[str]]) -> list[tuple[str, float]]:
        return [(h.record.id, h.score) for h in current_first(hits, replaced)]

    unchanged = [("a", 9), ("b", 8), ("c", 7), ("d", 6), ("e", 5), ("f", 4)]
    assert run({"a": {"d", "f"}}) == [("b", 8), ("c", 7), ("d", 6), ("a", 6), ("e", 5), ("f", 4)]
    assert run({"c": {"a"}}) == unchanged  # what replaced it ranks above it already
    assert (
        run({"c": {"zz"}, "e": set()}) == unchanged
    )  # its replacements are not among the hits, or nothing replaced it
    assert run({"a": {"f"}}) == unchanged  # f scores under half of a: a matched for what f does not say
    assert run({"b": {"a", "d"}}) == unchanged  # one of its replacements comes first already
    # Two replaced turns, one replacing the other's facts: each ends below what replaced it.
    assert run({"a": {"b"}, "b": {"e"}}) == [("c", 7), ("d", 6), ("e", 5), ("b", 5), ("a", 5), ("f", 4)]


def test_stand_in_keeps_order_and_skips_pending_facts() -> None:
    from mnemonite import Episode, Fact
    from mnemonite.search.hybrid import stand_in

    def hit(record: Episode | Fact, score: float) -> SearchHit:
        tier = "episodic" if isinstance(record, Episode) else "semantic"
        return SearchHit(record=record, tier=tier, score=score)

    def fact(fid: str, sources: list[str], status: str = "active") -> Fact:
        now = datetime.now(UTC)
        return Fact(
            id=fid, text=fid, user="u", agent="a", source_episode_ids=sources, status=status,  # type: ignore[arg-type]
            valid_from=now, recorded_at=now, rule_id="r", confidence=1.0, promotion_ts=now,
        )  # fmt: skip

    e = {i: ep(i, f"turn {i}").model_copy(update={"user": "u"}) for i in ("a", "b", "c", "d")}

    def run(f2: float) -> list[tuple[str, float]]:
        hits = [
            hit(e["a"], 9), hit(fact("F1", ["b", "c"]), 8), hit(e["b"], 7), hit(fact("P", ["a"], "pending"), 6),
            hit(e["d"], 5), hit(fact("F2", ["d", "a"]), f2), hit(e["c"], 3),
        ]  # fmt: skip
        return [(h.record.id, h.score) for h in stand_in(hits)]

    # F2 scores at least half of turn a's score: it takes a's place (and score), and d, which it covers, goes.
    # b and c are covered by F1, ranked above them; the pending P stands in for nothing.
    assert run(4.6) == [("F2", 9), ("F1", 8), ("P", 6)]
    # F2 scores under half of a: a's match came from words F2 does not carry, so a stays and holds F2;
    # d, whose only fact was left out, stays too.
    assert run(4.4) == [("a", 9), ("F1", 8), ("P", 6), ("d", 5)]


async def test_both_tiers_share_one_full_text_scale(memory_url: str) -> None:
    """The best fact does not take the whole full-text weight when an episode matches the words better:
    BM25 is divided by the best score of both tiers searched, not of the fact's own tier."""
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False, embedder="none"))
    await mem.episodic.put(ep("t1", "Jo rode the red tram to the old harbour market"), user="u", session="s", agent="a")
    base = {"promotion_ts": datetime.now(UTC), "rule_id": "r", "confidence": 1.0, "source_episode_ids": []}
    await mem.semantic.apply_delta(
        AddDelta(fact_payload={"text": "Jo likes markets", "user": "u", "agent": "a"}, **base)
    )
    scope, question = Scope(user="u", agent="a"), "red tram harbour market"
    hits = {h.tier: h for h in await mem.search(scope, question, k=5)}
    alone = (await mem.search(scope, question, k=5, tiers=("semantic",)))[0]
    assert alone.score == pytest.approx(1.0)  # full text only: its own tier's best scores the whole weight
    top = max(h.fulltext_score or 0.0 for h in hits.values())
    assert hits["episodic"].fulltext_score == top
    fact = hits["semantic"]
    assert fact.fulltext_score is not None and fact.fulltext_score < top
    assert fact.score == pytest.approx(fact.fulltext_score / top)
    await mem.close()


async def test_a_turn_that_names_things_ranks_above_one_that_only_asks(memory_url: str) -> None:
    """The episodes' prior: specificity (rare words) and the share of the text that asks. Without it the
    question, which shares the query's words, comes first; with the defaults the answer does. Over a handful
    of turns the prior is damped (`lexical.PRIOR_SHRINK`)."""
    openers = ["That is so great", "Thanks so much", "Wow, that is so cool", "Haha, that is so true", "Good luck",
               "Oh nice", "That sounds fun", "I am so happy", "Sure thing", "No worries"]  # fmt: skip
    closers = ["to hear!", "for asking!", "and have a good day!", "you are so kind!", "see you soon!", "my friend!",
               "as always!", "for real!", "by the way!", "again!"]  # fmt: skip
    chatter = [f"{a} {b}" for a in openers for b in closers]  # frequencies over a hundred turns mean something
    turns = [*chatter, "Have you read any good books lately?", "I'm reading Dune by Frank Herbert, a gripping book."]
    async with await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False)) as mem:
        episodes = [ep(f"t{i}", text, minutes=i) for i, text in enumerate(turns)]
        await mem.episodic.put_many(episodes, user="u", session="s", agent="a")
        await mem.index()
        asked, told = f"t{len(chatter)}", f"t{len(chatter) + 1}"

        async def top(**options: object) -> dict[str, float]:
            found = await mem.search(
                Scope(user="u"), "which books has she read?", k=2, options=SearchOptions(**options)
            )  # type: ignore[arg-type]
            return {h.record.id: h.score for h in found}

        off = await top(specificity_weight=0, asking_penalty=0)
        assert list(off) == [asked, told]
        default = await top()
        assert default[told] / default[asked] > 1.1 * off[told] / off[asked]  # the answer gains on the question
        assert list(await top(specificity_weight=4, asking_penalty=0.3)) == [told, asked]
        # Each part alone: the specific answer gains by its words, the question loses by asking.
        by_words = await top(specificity_weight=4, asking_penalty=0)
        assert by_words[told] / by_words[asked] > off[told] / off[asked]
        assert list(await top(specificity_weight=0, asking_penalty=0.3)) == [told, asked]
        # The prior works over the in-memory full-text index; with the store's own full text it is left out.
        assert await top(lexical="fts5") == await top(lexical="fts5", specificity_weight=0, asking_penalty=0)


def test_cosines_on_one_thread_match_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    from mnemonite.search import cosine

    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(3000, 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    vector = matrix[17] + 0.1 * matrix[5]
    vector /= np.linalg.norm(vector)
    ours = cosine.cosines(matrix, vector)
    assert ours.dtype == np.float32 and ours.shape == (3000,)
    assert np.allclose(ours, matrix @ vector, atol=1e-6) and int(np.argmax(ours)) == 17
    monkeypatch.setattr(cosine, "ONE_THREAD_ROWS", 100)  # above it: BLAS, the same cosines
    assert np.allclose(cosine.cosines(matrix, vector), ours, atol=1e-6)
