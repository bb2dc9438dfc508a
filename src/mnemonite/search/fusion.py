"""Score fusion (pure functions): reciprocal rank fusion, a weighted linear blend, and the cosines
imputed for records not embedded yet."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence


def rrf_fusion(rankings: Sequence[Sequence[int]], weights: Sequence[float], k: int = 60) -> dict[int, float]:
    """Reciprocal rank fusion: sum of ``weight / (k + rank)`` over the lists a record appears in (rank from 1)."""
    fused: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def linear_fusion(
    lexical: Mapping[int, float], cosine: Mapping[int, float], alpha: float, top: float | None = None
) -> dict[int, float]:
    """``alpha * lexical / top + (1 - alpha) * max(cosine, 0)``, each term in [0, 1].

    ``top`` is ``max(lexical)`` unless given (a larger one, shared by several lists, puts them on one scale).
    """
    top = max(lexical.values(), default=0.0) if top is None else max(top, max(lexical.values(), default=0.0))
    rest = 1 - alpha
    fused = {item: rest * value if value > 0 else 0.0 for item, value in cosine.items()}
    for item, value in lexical.items():
        if value > 0 and top > 0:
            fused[item] = fused.get(item, 0.0) + alpha * (value / top)
        else:
            fused.setdefault(item, 0.0)
    return fused


def impute_by_rank(
    lexical: Sequence[tuple[int, float]], cosine: Mapping[int, float], missing: Collection[int]
) -> dict[int, float]:
    """Cosines for full-text candidates that have no vector yet (the indexer has not reached them).

    The record the full text ranks r-th is given the r-th best cosine of the records that have
    one (the worst, past the end), so its lexical evidence counts as it would in a full-text
    search; a cosine of zero would sink it below records that merely have a vector.
    """
    if not cosine or not missing:
        return {}
    ordered = sorted(cosine.values(), reverse=True)
    ranked = sorted(lexical, key=lambda item: -item[1])
    return {
        seq: ordered[min(rank, len(ordered)) - 1] for rank, (seq, _) in enumerate(ranked, start=1) if seq in missing
    }
