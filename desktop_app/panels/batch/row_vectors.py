"""The batch table's sentence vectors (issue 42, the corpus map): :class:`RowVectors`, one float32 [d] vector per
scored table row, by the row's index in the table's model (arrival order). Qt-free.

The batch job keeps them while it scores (:class:`~desktop_app.workers.batch.ChunkVectors`, read in the scoring passes
themselves: :mod:`model.records.vectors`); Clear drops them with the rows. Memory: rows x d x 4 bytes (25,000 reviews
x 128 for the bundled model: 12.8 MB; x 768 for a BERT-base: 77 MB).
"""

from __future__ import annotations

import numpy as np

from model.records.vectors import SentenceVectors, VectorSpec, stack_vectors


class RowVectors:
    """The vectors of the table's rows.

    Attributes:
        spec: what the batch jobs keep (:class:`model.records.vectors.VectorSpec`; the last layer, the read-out's own
            pooling).
        model: the folder of the model whose vectors these are ("" when unknown).
    """

    def __init__(self, spec: VectorSpec | None = None) -> None:
        self.spec = spec or VectorSpec()
        self.model = ""
        self._at: dict[int, np.ndarray] = {}

    def extend(self, vectors: list, first: int) -> None:
        """The vectors of the rows ``first``, ``first + 1``, ... (None for a row without one)."""
        for k, v in enumerate(vectors):
            if v is not None:
                self._at[first + k] = v

    def clear(self) -> None:
        """Drop every vector (the table was cleared)."""
        self._at.clear()

    def __len__(self) -> int:
        return len(self._at)

    def vector(self, row: int) -> np.ndarray | None:
        """float32 [d] of table row ``row``, or None."""
        return self._at.get(row)

    def gather(self, n_rows: int) -> SentenceVectors:
        """The vectors of the table's rows 0..n_rows-1 that have one, in row order (``rows``: their indices)."""
        return stack_vectors([self._at.get(i) for i in range(n_rows)], self.spec, self.model)
