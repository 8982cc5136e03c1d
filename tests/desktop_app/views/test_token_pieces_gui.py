"""The token view draws the WordPiece pieces of one word together (issue 33, item 8): "Kutcher", not "Ku t cher";
each piece stays clickable and names itself with the ``##`` marker in its tooltip."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

pytestmark = [pytest.mark.gui, pytest.mark.timeout(120)]

TEXT = "Ashton Kutcher is expendable"


@pytest.fixture
def view(qtbot, tiny_predictor):
    from desktop_app.state import ExplorerState
    from desktop_app.views.token_view import TokenView

    state = ExplorerState()
    v = TokenView(state)
    qtbot.addWidget(v)
    v.resize(700, 300)
    v.show()
    state.set_prediction(tiny_predictor.predict(TEXT))
    v.flush()
    qtbot.wait(20)
    return v


def words_of(pred) -> list[list[int]]:
    """Token indices grouped by word (a word's pieces follow it with "##")."""
    words: list[list[int]] = []
    for i, tok in enumerate(pred.tokens[1:], 1):
        if tok.startswith("##") and words:
            words[-1].append(i)
        else:
            words.append([i])
    return words


def test_the_pieces_of_one_word_touch_and_words_keep_their_space(view):
    pred, canvas = view.state.prediction, view.canvas
    words = words_of(pred)
    assert any(len(w) > 2 for w in words), pred.tokens  # the test text is split into pieces
    fm = QFontMetricsF(canvas.font())
    for word in (w for w in words if len(w) > 1):
        for a, b in zip(word, word[1:]):
            left, right = canvas.token_rect(a), canvas.token_rect(b)
            assert left.right() == right.left() and left.top() == right.top()
        # padding only at the word's two ends, none between its pieces: the word reads as one
        padding = [canvas.token_rect(i).width() - fm.horizontalAdvance(canvas.pieces[i][0]) for i in word]
        assert padding == pytest.approx([2.0] + [0.0] * (len(word) - 2) + [2.0])
    for w1, w2 in zip(words, words[1:]):  # between words: a space
        assert canvas.token_rect(w2[0]).left() - canvas.token_rect(w1[-1]).right() >= fm.horizontalAdvance(" ") - 0.5


def test_every_piece_stays_clickable_and_its_tooltip_names_the_word(qtbot, view):
    pred, canvas = view.state.prediction, view.canvas
    word = next(w for w in words_of(pred) if len(w) > 2)
    for i in word:
        qtbot.mouseClick(canvas, Qt.LeftButton, pos=view.token_center(i))
        assert view.state.selection == (i,)
    tip = canvas.tooltip_text(word[1])
    whole = "".join(pred.text[int(pred.offsets[k, 0]):int(pred.offsets[k, 1])] for k in word)
    assert f"\u201c##{pred.tokens[word[1]][2:]}" in tip.lower() and whole in tip and f"token {word[1]}" in tip


def test_a_zoom_or_a_new_width_re_measures_and_re_wraps_as_a_fresh_layout(view):
    """The canvas keeps the pieces' widths across re-wraps (issue 31: thousands of tokens): a zoom must measure them
    again in the new font, and a re-wrap to another width must give the boxes a fresh layout gives."""
    from desktop_app.views.token_layout import layout_tokens

    canvas = view.canvas
    font = canvas.font()
    font.setPointSizeF(font.pointSizeF() * 2)
    view.set_font_point_size(font.pointSizeF())
    for width in (None, 180):
        if width is not None:
            canvas.resize(width, canvas.height())
        fresh = layout_tokens(canvas.pieces, QFontMetricsF(canvas.font()), max(100, canvas.width()))
        assert (canvas.rects == fresh.rects).all() and (canvas.pads == fresh.pads).all()
    fm = QFontMetricsF(canvas.font())
    widths = [canvas.token_rect(i).width() - canvas.pads[i].sum() for i in range(len(canvas.pieces))]
    assert widths == pytest.approx([fm.horizontalAdvance(shown) for shown, _sep in canvas.pieces])


def test_word_starts_follow_the_separators():
    from desktop_app.views.token_layout import word_starts

    pieces = [("[CLS]", ""), ("Ku", " "), ("##tch", ""), ("##er", ""), ("is", " "), ("\u2026", "\u2026"), ("x", "\n")]
    assert word_starts(pieces).tolist() == [0, 1, 1, 1, 4, 5, 6]
    assert word_starts([]).tolist() == []


@pytest.mark.parametrize("dropped", ["\x96", "\u200b", "\x96<br /><br />"])
def test_a_character_the_tokenizer_drops_is_no_truncation_marker(tiny_predictor, dropped):
    """IMDB reviews hold Windows-1252 dashes read as the control character U+0096 ("Rose \\x96 Does ..."): the
    tokenizer drops it, like other control and format characters. The token view showed the truncation marker "[…]"
    there, telling a reader of a short, whole review that text had been cut."""
    from desktop_app.views.token_layout import token_pieces

    pred = tiny_predictor.predict(f"Rose {dropped} Does anything happen")
    seps = [sep for _shown, sep in token_pieces(pred)]
    assert "\u2026" not in seps, seps
    assert seps.count("\n") == (1 if "<br" in dropped else 0), seps


def test_text_cut_by_truncation_keeps_its_marker(tiny_predictor):
    """The marker stays where head+tail truncation cut real words out."""
    from desktop_app.views.token_layout import token_pieces

    text = " ".join(f"word{i % 50} \x96" for i in range(2000))
    pred = tiny_predictor.predict(text, long_text="head_tail")
    assert [sep for _shown, sep in token_pieces(pred)].count("\u2026") == 1
