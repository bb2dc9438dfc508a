"""Cosines of stored unit vectors against a query vector, computed on the calling thread.

``matrix @ vector`` hands the product to numpy's BLAS, and OpenBLAS (what numpy's wheels ship) splits any
product over more than about 10,000 numbers, 24 rows of 384 dimensions, across its threads. Beside a server's
other threads (inference, SQLite) on a small machine, those threads wait for a core and for each other: under a
steady load on two cores, the product over 2,000 vectors took 0.3 ms at the median and 10 ms at the 95th
percentile, against 0.1 and 0.14 ms summed on one thread, and a soak slowed down as the users' rows grew past a
thousand (``bench/README.md``, "The service at the machine's limit"). Up to ``ONE_THREAD_ROWS`` rows the sum
runs on the calling thread (``numpy.einsum``, no BLAS); above that, where an approximate index takes over by
default anyway, BLAS's threads pay for themselves.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["ONE_THREAD_ROWS", "cosines"]

ONE_THREAD_ROWS = 20_000


def cosines(matrix: npt.NDArray[np.float32], vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``matrix @ vector`` (one cosine per row of unit vectors), on this thread up to ``ONE_THREAD_ROWS`` rows."""
    if len(matrix) <= ONE_THREAD_ROWS:
        scores: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, vector)
        return scores
    return matrix @ vector
