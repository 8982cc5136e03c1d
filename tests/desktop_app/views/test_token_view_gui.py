"""The token view (desktop_app.views.token_view): the caption keeps its height, so a second click on a token clears
the selection (a bug a user reported, issue 11, item 7)."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

pytestmark = pytest.mark.gui


# -- token view: the caption must not change height, so a second click clears the selection --------------------
def test_token_view_caption_height_is_stable_and_second_click_clears(qtbot, tiny_predictor):
    from desktop_app.state import ExplorerState
    from desktop_app.views.token_view import TokenView

    state = ExplorerState()
    view = TokenView(state)
    qtbot.addWidget(view)
    view.resize(260, 400)  # narrow: the long default caption would wrap to several lines
    view.show()
    state.set_prediction(tiny_predictor.predict("a truly wonderful film with a great cast and a fine story " * 3))
    view.flush()
    qtbot.wait(20)
    i = 5
    before = view.canvas.mapTo(view, view.token_center(i))
    cap_h = view.caption.height()
    qtbot.mouseClick(view.canvas, Qt.LeftButton, pos=view.token_center(i))
    assert state.selection == (i,)
    view.flush()
    qtbot.wait(20)
    assert view.caption.height() == cap_h
    # the same spot on screen still holds token i: a second click there clears the selection
    qtbot.mouseClick(view.canvas, Qt.LeftButton, pos=view.canvas.mapFrom(view, before))
    assert state.selection == ()
    assert view.caption.toolTip()  # the full caption is one hover away
