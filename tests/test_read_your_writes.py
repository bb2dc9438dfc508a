"""Search reads its writes: records not embedded yet are embedded inline when few, and fused fairly otherwise."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ep
from mnemonite import Embedder, Memory, MemoryConfig, Scope, SearchOptions
from mnemonite.embedding.onnx import OnnxEmbedder
from mnemonite.search.fusion import impute_by_rank, linear_fusion

ALEX = Scope(user="alex")
ISOLATED = SearchOptions(source_boost=0.0, neighbour_weight=0.0, feedback=0.0)  # fusion alone decides


class Counting:
    """The packaged model, counting the texts it embeds for storage."""

    def __init__(self) -> None:
        self._inner = OnnxEmbedder.default()
        self.model, self.dimensions = self._inner.model, self._inner.dimensions
        self.embedded = 0

    async def embed(self, text: str) -> npt.NDArray[np.float32]:
        return await self._inner.embed(text)

    async def embed_batch(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.embedded += len(texts)
        return await self._inner.embed_batch(texts)


@pytest.fixture
async def lagging(memory_url: str) -> AsyncIterator[tuple[Memory, Counting]]:
    """A memory whose indexer never runs by itself: every write stays pending until a search or index()."""
    counting = Counting()
    assert isinstance(counting, Embedder)
    config = MemoryConfig(url=memory_url, index_in_background=False, index_on_close=False)
    mem = await Memory.open(config=config, embedder=counting)
    yield mem, counting
    await mem.close()


async def test_a_search_right_after_a_write_finds_it_by_meaning(lagging: tuple[Memory, Counting]) -> None:
    mem, counting = lagging
    await mem.episodic.put(ep("cat", "My cat Milo sleeps all day"), user="alex", session="s", agent="a")
    await mem.episodic.put(ep("tax", "The quarterly report is due on Friday"), user="alex", session="s", agent="a")
    hits = await mem.search(ALEX, "feline pet", k=1)  # no word in common with the record
    assert [h.record.id for h in hits] == ["cat"] and hits[0].vector_rank == 1
    assert counting.embedded == 2
    assert (await mem.health()).pending_embeddings == 0
    assert await mem.index() == 0  # the indexer passes over what the search embedded: nothing twice
    assert counting.embedded == 2


async def test_only_the_scope_pending_records_are_embedded(lagging: tuple[Memory, Counting]) -> None:
    mem, counting = lagging
    await mem.episodic.put(ep("a1", "I adopted a kitten"), user="alex", session="s", agent="a")
    await mem.episodic.put(ep("b1", "Bob adopted a puppy"), user="bob", session="s", agent="a")
    await mem.search(ALEX, "pets", k=3)
    assert counting.embedded == 1 and (await mem.health()).pending_embeddings == 1
    assert await mem.index() == 1


async def test_past_the_bound_the_best_full_text_candidates_are_embedded(lagging: tuple[Memory, Counting]) -> None:
    mem, counting = lagging
    texts = [f"note {i} about the garden shed roof" for i in range(6)] + ["the boat needs new sails"]
    await mem.episodic.put_many(
        [ep(f"n{i}", text, minutes=i) for i, text in enumerate(texts)], user="alex", session="s", agent="a"
    )
    bounded = SearchOptions(embed_pending=3, embed_head=2, embed_seconds=0)  # no time to embed the backlog itself
    hits = await mem.search(ALEX, "garden shed", k=10, options=bounded)
    assert counting.embedded == 2  # seven pending > three: only the two best full-text candidates
    with_vectors = [h for h in hits if h.cosine is not None]
    assert len(with_vectors) == 2 and {h.fulltext_rank for h in with_vectors} == {1, 2}
    assert (await mem.health()).pending_embeddings == 5 == hits.unsearched


async def test_a_record_without_a_vector_ranks_as_full_text_ranks_it(lagging: tuple[Memory, Counting]) -> None:
    """The best full-text match has no vector yet; records with vectors must not bury it."""
    mem, _ = lagging
    embedded = [f"planning the trip to the mountains, day {i}" for i in range(8)]
    await mem.episodic.put_many(
        [ep(f"e{i}", text, minutes=i) for i, text in enumerate(embedded)], user="alex", session="s", agent="a"
    )
    await mem.index()
    await mem.episodic.put(ep("late", "the ferry timetable for the lake crossing"), user="alex", session="s", agent="a")
    no_inline = ISOLATED.model_copy(update={"embed_pending": 0, "embed_head": 0})
    full_text = await mem.search(
        ALEX, "ferry timetable mountains", k=3, options=no_inline.model_copy(update={"use_vectors": False})
    )
    assert full_text[0].record.id == "late"
    hits = await mem.search(ALEX, "ferry timetable mountains", k=3, options=no_inline)
    assert hits[0].record.id == "late" and hits[0].cosine is None and hits[0].fulltext_rank == 1


async def test_close_embeds_what_waits_unless_told_not_to(memory_url: str) -> None:
    config = MemoryConfig(url=memory_url, index_in_background=False)
    mem = await Memory.open(config=config)
    await mem.episodic.put(ep("x", "a note to embed"), user="alex", session="s", agent="a")
    await mem.close(finish_indexing=False)
    mem = await Memory.open(config=config)
    assert (await mem.health()).pending_embeddings == 1
    seen: list[int] = []
    await mem.close(progress=lambda step: seen.append(step.remaining))
    assert seen == [0]
    mem = await Memory.open(config=config)
    assert (await mem.health()).pending_embeddings == 0
    await mem.close()


pairs = st.lists(st.tuples(st.integers(0, 50), st.floats(0.01, 30)), unique_by=lambda p: p[0], max_size=30)


@given(lexical=pairs, cosines=st.lists(st.floats(-1, 1), min_size=1, max_size=30), data=st.data())
def test_imputed_cosines_follow_the_full_text_order(
    lexical: list[tuple[int, float]], cosines: list[float], data: st.DataObject
) -> None:
    cosine = {100 + i: c for i, c in enumerate(cosines)}
    missing = set(data.draw(st.lists(st.sampled_from([s for s, _ in lexical]), unique=True))) if lexical else set()
    imputed = impute_by_rank(lexical, cosine, missing)
    assert set(imputed) == missing
    assert all(min(cosines) <= c <= max(cosines) for c in imputed.values())
    by_text = sorted((score, seq) for seq, score in lexical if seq in missing)
    for (low, a), (high, b) in itertools.pairwise(by_text):
        if low < high:  # a better full-text score never gets a worse imputed cosine
            assert imputed[a] <= imputed[b]
    fused = linear_fusion(dict(lexical), {**cosine, **imputed}, 0.3)
    if lexical and max(s for _, s in lexical) in [s for q, s in lexical if q in missing]:
        best = max((s, q) for q, s in lexical if q in missing)[1]
        assert fused[best] == max(fused.values())  # the top full-text record with no vector is never sunk
