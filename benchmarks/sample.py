"""The seeded review sample the newer benchmarks time (``--data``, ``--n``), read in one place.

``model`` is imported inside :func:`seeded_reviews`, so a benchmark that swaps the ``model`` package it measures
(``benchmarks.gpu_scoring --tree``) can import this module first.
"""

from __future__ import annotations


def seeded_reviews(path: str, n: int, seed: int = 0) -> list[str]:
    """``n`` texts of the labelled JSON Lines file ``path`` (e.g. IMDB test), drawn by a permutation seeded with
    ``seed``: the same reviews in every run, mode and tree. Raises what :func:`model.files.textio.read_labelled` raises."""
    import numpy as np

    from model.files.textio import read_labelled

    texts = read_labelled(path)[0]
    return [texts[i] for i in np.random.default_rng(seed).permutation(len(texts))[:n]]
