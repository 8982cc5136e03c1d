"""How a long text is read in windows: :class:`DocumentWindows` (NumPy only).

Built by :func:`model.text.document_windows.document_windows` (the windows of the model's maximum length; see
docs/long_documents.md) and by :meth:`model.records.prediction.Prediction.document_windows`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DocumentWindows:
    """How one text is read: its windows in document token indices and in characters.

    Attributes:
        ranges: int64 [W, 2] half-open document-token ranges of the text pieces each window reads (the document's
            tokens are the special prefix, every piece, the special suffix).
        chars: int64 [W, 2] the character span ``text[s:e]`` of each window's pieces.
        prefix: how many special tokens come before the pieces (1, ``[CLS]``, for the bundled model).
        suffix: how many come after them.
        num_tokens: T, the document's tokens.
    """

    ranges: np.ndarray
    chars: np.ndarray
    prefix: int
    suffix: int
    num_tokens: int

    @property
    def count(self) -> int:
        """W, the number of windows."""
        return len(self.ranges)

    def tokens_of(self, w: int) -> np.ndarray:
        """int64 [T_w]: the document token index of each of window w's tokens (special tokens included)."""
        s, e = (int(x) for x in self.ranges[w])
        pre = np.arange(self.prefix)
        suf = np.arange(self.num_tokens - self.suffix, self.num_tokens)
        return np.concatenate([pre, np.arange(s, e), suf]).astype(np.int64)
