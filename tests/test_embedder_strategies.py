"""Embedder changes: lock-on-first refuses, multi-active reads both, auto-migrate re-embeds and resumes."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import ep
from embedding_server import DIMENSIONS, embedding_server
from mnemonite import EmbedderMismatchError, Memory, MemoryConfig, OnnxEmbedder, OpenAIEmbedder, Scope


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    with embedding_server() as running:
        yield running


def bow(server: ThreadingHTTPServer, dimensions: int = DIMENSIONS) -> OpenAIEmbedder:
    return OpenAIEmbedder(f"http://127.0.0.1:{server.server_address[1]}/v1", "bow", dimensions)


def config(path: Path, strategy: str = "lock-on-first") -> MemoryConfig:
    return MemoryConfig(url=f"sqlite:///{path / 'm.db'}", embedder_strategy=strategy, index_in_background=False)  # type: ignore[arg-type]


async def seed(path: Path) -> None:
    async with await Memory.open(config=config(path)) as mem:
        await mem.episodic.put_many(
            [ep(f"e{i}", f"note number {i} about gardening") for i in range(10)], user="u", session="s", agent="a"
        )
        assert await mem.index() == 10


async def test_lock_on_first_refuses_another_embedder(tmp_path: Path, server: ThreadingHTTPServer) -> None:
    await seed(tmp_path)
    with pytest.raises(EmbedderMismatchError, match="all-MiniLM-L6-v2-onnx-int8"):
        await Memory.open(config=config(tmp_path), embedder=bow(server))
    async with await Memory.open(config=config(tmp_path)) as mem:  # the original embedder still opens it
        (hit,) = await mem.search(Scope(user="u"), "gardening", k=1)
        # Its vectors still rank: the ten near-identical notes differ by the model's rounding only, so
        # which of them ranks first by cosine is not the test's business.
        assert hit.vector_rank is not None and hit.cosine is not None and hit.cosine > 0.5


async def test_same_model_with_other_dimensions_is_refused(tmp_path: Path, server: ThreadingHTTPServer) -> None:
    async with await Memory.open(config=config(tmp_path), embedder=bow(server)) as mem:
        await mem.episodic.put(ep("e1", "x"), user="u", session="s", agent="a")
    with pytest.raises(EmbedderMismatchError, match="dimensions"):
        await Memory.open(config=config(tmp_path, "multi-active"), embedder=bow(server, 32))


async def test_multi_active_reads_both_models(tmp_path: Path, server: ThreadingHTTPServer) -> None:
    await seed(tmp_path)
    mem = await Memory.open(
        config=config(tmp_path, "multi-active"), embedder=bow(server), previous_embedders=[OnnxEmbedder.default()]
    )
    try:
        await mem.episodic.put(ep("new", "fresh note about gardening"), user="u", session="s", agent="a")
        assert await mem.index() == 1  # only the new record is embedded by the new model
        hits = await mem.search(Scope(user="u"), "gardening", k=11)
        assert {h.record.id for h in hits if h.vector_rank is not None} == {f"e{i}" for i in range(10)} | {"new"}
    finally:
        await mem.close()


async def test_auto_migrate_re_embeds_resumably_then_retires_the_old_model(
    tmp_path: Path, server: ThreadingHTTPServer
) -> None:
    await seed(tmp_path)
    mem = await Memory.open(config=config(tmp_path, "auto-migrate"), embedder=bow(server))
    mem._indexer.batch_size = 4  # type: ignore[union-attr]
    progress = mem.migrate_embedder()
    first = await anext(progress)
    assert (first.model, first.batch, first.remaining) == ("openai:bow", 4, 6)
    await progress.aclose()  # cancelled after one batch
    await mem.close(finish_indexing=False)  # and the process stops without embedding the rest
    mem = await Memory.open(config=config(tmp_path, "auto-migrate"), embedder=bow(server))
    steps = [p async for p in mem.migrate_embedder()]
    assert [p.remaining for p in steps if p.kind == "episode"] == [0]  # resumed: the 6 left, in one batch of 64
    assert [m for m, _, _ in await mem._store.embedders()] == ["openai:bow"]  # the old vectors were dropped
    await mem.close()
    async with await Memory.open(config=config(tmp_path), embedder=bow(server)) as locked:  # now locked to the new one
        assert (await locked.search(Scope(user="u"), "gardening", k=1))[0].vector_rank is not None
