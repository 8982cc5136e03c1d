"""state.inside (desktop_app.inside_results): the block's views' results follow the text shown, and a failing view
leaves the others current."""

from types import SimpleNamespace

import pytest

from desktop_app.inside_results import RESULT_FIELDS, InsideResults
from desktop_app.state import ExplorerState


def _result(*tokens):
    return SimpleNamespace(tokens=tuple(tokens))


def test_set_announces_each_result_with_its_note():
    inside = InsideResults()
    seen = []
    inside.events.graph.connect(lambda new, old: seen.append((new, old, inside.graph_note)))
    first = _result("a")
    inside.set("graph", None, "Computing\u2026")
    inside.set("graph", first)
    inside.set("graph", first)  # computed again: still news
    assert [s[2] for s in seen] == ["Computing\u2026", "", ""]
    assert seen[1][:2] == (first, None) and seen[2][:2] == (first, first)
    assert inside.note("graph") == ""


def test_an_unknown_result_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match="components, graph, patching, block_trace"):
        InsideResults().set("heads", None)


def test_follow_keeps_the_results_of_the_same_tokens_only():
    inside = InsideResults()
    inside.set("components", _result("good", "film"))
    inside.set("patching", _result("bad", "film"))
    inside.follow(("good", "film"))
    assert inside.components is not None and inside.patching is None
    inside.follow(None)
    assert all(getattr(inside, name) is None for name in RESULT_FIELDS)


def test_a_failing_view_leaves_the_others_current(monkeypatch):
    reported = []
    monkeypatch.setattr("sys.excepthook", lambda *exc: reported.append(exc[0]))
    inside = ExplorerState().inside
    seen = []
    inside.events.block_trace.connect(lambda new: 1 / 0)
    inside.events.block_trace.connect(lambda new: seen.append(new))
    inside.set("block_trace", _result("x"))
    assert reported == [ZeroDivisionError] and len(seen) == 1


def test_a_new_prediction_drops_the_results_of_the_old_text():
    state = ExplorerState()
    state.inside.set("components", _result("a", "b"))
    state.set_prediction(None)
    assert state.inside.components is None
