"""Where the token view puts each token: the display text of each token (:func:`token_pieces`) and the word-wrapped
boxes (:func:`layout_tokens`).

The word pieces of one word (WordPiece ``##`` pieces, joined by no separator) are drawn together, as the word reads:
no padding between them, so "Kutcher" reads "Kutcher", not "Ku t cher"; each piece keeps its own box, so it stays
clickable, and a word that does not fit the line moves to the next line whole. NumPy and Qt's font metrics only.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontMetricsF

_BR = re.compile(r"(?i)<br\s*/?\s*>")
PAD_X = 2.0  # pixels of padding left/right inside a word's box (not between the pieces of one word)
LINE_GAP = 4.0  # pixels between lines
MARGIN = 4.0  # pixels around the text


def _kept(gap: str) -> str:
    """``gap`` without what a tokenizer drops and never gives a token: HTML line breaks, whitespace, control and
    format characters (Unicode categories Cc, Cf: IMDB's Windows-1252 dashes read as U+0096, zero-width spaces) and
    U+FFFD, as BERT's text cleaning does. Text left over was dropped by truncation."""
    return "".join(c for c in _BR.sub("", gap)
                   if not c.isspace() and c != "\ufffd" and unicodedata.category(c) not in ("Cc", "Cf"))


def token_pieces(pred, lo: int = 0, hi: int | None = None) -> list[tuple[str, str]]:
    """How each token (of ``lo:hi``, default all) is displayed and what separates it from the previous one.

    Uses the character offsets to show the original text (case and accents kept).

    Returns:
        T pairs (display text, separator) where separator is "" (same word, e.g.
        a ``##`` piece), " " (whitespace), "\\n" (an HTML ``<br />`` or newline)
        or "\u2026" (text dropped by head+tail truncation). A sentence pair's second text (from
        ``pred.pair_start``, its offsets index ``pred.text_pair``) starts on a new line.
    """
    out: list[tuple[str, str]] = []
    text = pred.text
    prev_end = 0
    second = getattr(pred, "pair_start", -1) if getattr(pred, "text_pair", None) is not None else -1
    for i in range(lo, len(pred.tokens) if hi is None else hi):
        s, e, tok = int(pred.offsets[i, 0]), int(pred.offsets[i, 1]), pred.tokens[i]
        if i == second > lo:  # a pair's second text: its offsets index text_pair; it starts a new line
            text, prev_end = pred.text_pair, s
            out.append((text[s:e] if e > s else tok, "\n"))
            prev_end = e if e > s else prev_end
            continue
        shown = text[s:e] if e > s else tok
        if i == lo:
            out.append((shown, ""))
            prev_end = e
            continue
        sep = ""
        if e > s:
            gap = text[prev_end:s] if s > prev_end else ""
            if gap:
                if _kept(gap):
                    sep = "\u2026"
                elif "\n" in gap or _BR.search(gap):
                    sep = "\n"
                else:
                    sep = " "
            prev_end = e
        else:
            sep = " "
        if i == 1:
            sep = " " if sep == "" else sep
        out.append((shown, sep))
    return out


def word_starts(pieces: list[tuple[str, str]]) -> np.ndarray:
    """int [T]: the index of the first token of each token's word (a run of tokens joined by no separator)."""
    index = np.arange(len(pieces), dtype=np.int64)
    joined = np.fromiter((sep == "" for _shown, sep in pieces), bool, len(pieces))
    joined[:1] = False  # the first token starts its word
    return np.maximum.accumulate(np.where(joined, 0, index)) if len(pieces) else index


def piece_advances(pieces: list[tuple[str, str]], fm: QFontMetricsF) -> np.ndarray:
    """float [T]: the advance width (pixels) of each piece's display text in font ``fm``, without padding.

    Each distinct text is measured once (a review repeats "the", "," ...): thousands of tokens cost a few hundred
    font-metric calls. Depends on the font only, so a view keeps it across re-wraps to a new width.
    """
    measured: dict[str, float] = {}
    out = []
    for shown, _sep in pieces:
        w = measured.get(shown)
        if w is None:
            w = measured[shown] = fm.horizontalAdvance(shown)
        out.append(w)
    return np.asarray(out, dtype=np.float64)


@dataclass
class TokenLayout:
    """The boxes of a laid-out token sequence (pixels, the canvas's coordinates).

    Attributes:
        rects: float [T, 4] (x0, y0, x1, y1) of each token's box (what is coloured, hit-tested and outlined).
        pads: float [T, 2] (left, right) padding inside each box: ``PAD_X`` at a word's ends, 0 between its pieces.
        starts: int [T], :func:`word_starts`.
        markers: the boxes of the truncation markers "[…]".
        height: pixels needed.
    """

    rects: np.ndarray
    pads: np.ndarray
    starts: np.ndarray
    markers: list[QRectF]
    height: float


def layout_tokens(
    pieces: list[tuple[str, str]], fm: QFontMetricsF, width: float, advances: np.ndarray | None = None
) -> TokenLayout:
    """Lay ``pieces`` (from :func:`token_pieces`) out in reading order, wrapped at ``width`` pixels in font ``fm``.

    A word's pieces touch (no padding between them); a word that overflows the line moves to the next one whole
    (unless it alone is longer than the line). ``advances``: float [T], :func:`piece_advances` of ``pieces`` in
    ``fm`` when the caller kept it (measured here otherwise). One pass of plain Python floats: 6,000 tokens in a
    few milliseconds.
    """
    h = fm.height() + 4
    step = h + LINE_GAP
    space = fm.horizontalAdvance(" ")
    n = len(pieces)
    starts = word_starts(pieces)
    pads = np.full((n, 2), PAD_X)
    pads[1:, 0][starts[1:] != np.arange(1, n)] = 0.0  # a continued word: no left padding ...
    pads[:-1, 1][starts[1:] != np.arange(1, n)] = 0.0  # ... and none on the piece before
    widths = ((piece_advances(pieces, fm) if advances is None else advances) + pads.sum(axis=1)).tolist()
    first = starts.tolist()
    x0s, y0s, x1s, y1s = [0.0] * n, [0.0] * n, [0.0] * n, [0.0] * n
    x, y, right = MARGIN, MARGIN, width - MARGIN
    markers: list[QRectF] = []
    for i, (_shown, sep) in enumerate(pieces):
        w, word_start = widths[i], first[i]
        if sep == "" and x + w > right and word_start < i and x0s[word_start] > MARGIN:
            # a word piece overflows: move the whole word to the next line
            shift_x = x0s[word_start] - MARGIN
            for k in range(word_start, i):
                x0s[k], x1s[k], y0s[k], y1s[k] = x0s[k] - shift_x, x1s[k] - shift_x, y0s[k] + step, y1s[k] + step
            x, y = x1s[i - 1], y + h + LINE_GAP
        if sep == "\n" and x > MARGIN:
            x, y = MARGIN, y + h + LINE_GAP
        elif sep == "\u2026":
            mw = fm.horizontalAdvance(" [\u2026] ") + 2 * PAD_X
            if x + mw > right and x > MARGIN:
                x, y = MARGIN, y + h + LINE_GAP
            markers.append(QRectF(x + space / 2, y, mw - space, h))
            x += mw
        elif sep == " ":
            x += space
        if x + w > right and x > MARGIN and sep != "":
            x, y = MARGIN, y + h + LINE_GAP
        x0s[i], y0s[i], x1s[i], y1s[i] = x, y, x + w, y + h
        x += w
    rects = np.array([x0s, y0s, x1s, y1s], dtype=np.float64).T.reshape(n, 4)
    return TokenLayout(rects, pads, starts, markers, y + h + 8)
