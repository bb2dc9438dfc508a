"""A rough relevance of many texts to a query, from a model's word-piece table alone: which to embed first.

A search that finds more records waiting for a vector than it can embed in its time (a bulk write the indexer
has not reached) embeds the likeliest first. Their likelihood is the projection of each text's word-piece
vectors on the mean of the query's (over their norms), read from the input embedding table of the model: no
inference, about 10,000 short texts in half a second, most of it tokenising. It is a weak signal, far below the
model's own, but related words sit near each other in that table, so a record that answers in other words is
usually among the first few hundred of thousands (``bench/backlog.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["WordPieceTable"]

_CHUNK = 4096  # table rows read at once (bounded memory)
_SPECIAL = 1000  # BERT vocabularies keep [PAD], [UNK], [CLS], [SEP], [MASK] and unused pieces below this id


class WordPieceTable:
    """The input embedding table of an ONNX sentence encoder (int8 with per-row scales, or float)."""

    def __init__(self, table: npt.NDArray[Any], scales: npt.NDArray[np.float32] | None) -> None:
        self._table, self._scales = table, scales
        self._squared: npt.NDArray[np.float32] | None = None  # each piece's squared norm, once asked

    @classmethod
    def of_model(cls, path: Path) -> WordPieceTable | None:
        """The table of the model at ``path``, or None when it has none this reader knows."""
        import onnx
        from onnx import numpy_helper

        graph = onnx.load(str(path), load_external_data=False).graph
        found = {init.name: init for init in graph.initializer if "word_embeddings" in init.name}
        quantised = next((name for name in found if name.endswith("word_embeddings.weight_q")), None)
        if quantised is not None and quantised.removesuffix("_q") + "_scale" in found:
            scales = numpy_helper.to_array(found[quantised.removesuffix("_q") + "_scale"]).astype(np.float32)
            return cls(numpy_helper.to_array(found[quantised]), scales.reshape(-1, 1))
        plain = next((name for name in found if name.endswith("word_embeddings.weight")), None)
        if plain is None:
            return None
        return cls(numpy_helper.to_array(found[plain]).astype(np.float16), None)

    def scores(self, query: Sequence[int], texts: Sequence[Sequence[int]]) -> npt.NDArray[np.float32]:
        """How near each text's word pieces lie to the query's: the projection of the text's summed piece vectors
        on the query's mean piece vector, over the root of the pieces' summed squared norms (as if the pieces of a
        text were orthogonal: no per-text vector is ever built, so 20,000 texts cost milliseconds). The query's and
        texts' special pieces are left out; a text with none scores 0."""
        wanted = np.asarray([i for i in query if i >= _SPECIAL], dtype=np.int64)
        out = np.zeros(len(texts), dtype=np.float32)
        if not len(wanted) or not len(texts):
            return out
        direction = self._rows(wanted).sum(axis=0)
        direction /= max(float(np.linalg.norm(direction)), 1e-12)
        along = np.concatenate([self._rows(np.arange(start, min(start + _CHUNK, len(self._table)))) @ direction
                                for start in range(0, len(self._table), _CHUNK)])  # fmt: skip
        pieces = [np.asarray(row, dtype=np.int64) for row in texts]
        pieces = [row[row >= _SPECIAL] for row in pieces]
        lengths = np.asarray([len(row) for row in pieces])
        filled = np.flatnonzero(lengths)
        if not len(filled):
            return out
        flat = np.concatenate([pieces[i] for i in filled])
        offsets = np.concatenate([[0], np.cumsum(lengths[filled])[:-1]])
        norms = np.sqrt(np.add.reduceat(self._norms2()[flat], offsets))
        out[filled] = np.add.reduceat(along[flat], offsets) / np.maximum(norms, 1e-12)
        return out

    def _rows(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        rows = self._table[ids].astype(np.float32)
        if self._scales is not None:
            rows *= self._scales[ids]
        return rows

    def _norms2(self) -> npt.NDArray[np.float32]:
        if self._squared is None:
            size = len(self._table)
            blocks = [self._rows(np.arange(start, min(start + _CHUNK, size))) for start in range(0, size, _CHUNK)]
            self._squared = np.concatenate([np.square(block).sum(axis=1) for block in blocks])
        return self._squared
