"""Score fusion (pure functions): reciprocal rank fusion and a weighted linear blend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf_fusion(rankings: Sequence[Sequence[int]], weights: Sequence[float], k: int = 60) -> dict[int, float]:
    """Reciprocal rank fusion: sum of ``weight / (k + rank)`` over the lists a record appears in (rank from 1)."""
    fused: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def linear_fusion(lexical: Mapping[int, float], cosine: Mapping[int, float], alpha: float) -> dict[int, float]:
    """``alpha * lexical / max(lexical) + (1 - alpha) * max(cosine, 0)``, each term in [0, 1]."""
    top = max(lexical.values(), default=0.0)
    rest = 1 - alpha
    fused = {item: rest * value if value > 0 else 0.0 for item, value in cosine.items()}
    for item, value in lexical.items():
        if value > 0 and top > 0:
            fused[item] = fused.get(item, 0.0) + alpha * (value / top)
        else:
            fused.setdefault(item, 0.0)
    return fused
