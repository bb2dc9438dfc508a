"""Token counting for budgets (`context_for`, `recall(max_tokens=...)`) and the facts' stored counts.

`TokenCounter` is one method. The default counts the word pieces of the packaged
tokenizer (the embedding model's, installed with mnemonite: nothing is downloaded); LLM
tokenizers differ by a few percent, so budgets are approximate by nature. Plug in the
tokenizer of your LLM (for instance ``tiktoken``) by passing any object with ``count``.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

from mnemonite.embedding.onnx import default_tokenizer_path

__all__ = ["EstimateCounter", "TokenCounter", "WordPieceCounter", "default_counter"]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text."""

    def count(self, text: str) -> int: ...


class WordPieceCounter:
    """Word pieces of the packaged tokenizer (no truncation, no special tokens)."""

    def __init__(self) -> None:
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    from tokenizers import Tokenizer

                    tokenizer = Tokenizer.from_file(str(default_tokenizer_path()))
                    tokenizer.no_truncation()
                    tokenizer.no_padding()
                    self._tokenizer = tokenizer
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


class EstimateCounter:
    """About four characters per token: for when no tokenizer is installed."""

    def count(self, text: str) -> int:
        return (len(text) + 3) // 4


_DEFAULT: TokenCounter | None = None


def default_counter() -> TokenCounter:
    """The packaged tokenizer's counter, shared per process."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = WordPieceCounter()
    return _DEFAULT
