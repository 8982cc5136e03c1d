"""The explanation panel's "Compare two methods" box: two method pickers over a two-strip comparison view.

It draws the state's explanations (:attr:`desktop_app.state.ExplorerState.explanations`) of the prediction the
panel explains; a method not computed yet gets an empty strip that says so.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QComboBox, QGroupBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from model.explain import EXPLANATION_METHODS, METHOD_TITLES, SIGNED_METHODS
from model.tasks.types import SINGLE_LABEL, task_type

from ..views.colours import DIVERGING_CMAP, SEQUENTIAL_CMAP, gradient_pixmap
from ..views.comparison_view import ComparisonView


class MethodComparison(QGroupBox):
    """Two method combo boxes (``left``, ``right``) and the :class:`ComparisonView` (``view``) under them.

    Args:
        state: the :class:`~desktop_app.state.ExplorerState` whose explanations are drawn.
        left, right: the methods compared at first.
    """

    def __init__(self, state, left: str = "attention", right: str = "grad_x_input",
                 parent: QWidget | None = None) -> None:
        super().__init__("Compare two methods", parent)
        self.state = state
        self._prediction = None
        lay = QVBoxLayout(self)
        pick = QHBoxLayout()
        self.left, self.right = QComboBox(), QComboBox()
        for combo, method in ((self.left, left), (self.right, right)):
            for m in EXPLANATION_METHODS:
                combo.addItem(METHOD_TITLES[m], m)
            combo.setCurrentIndex(EXPLANATION_METHODS.index(method))
        pick.addWidget(self.left)
        pick.addWidget(QLabel("vs"))
        pick.addWidget(self.right)
        lay.addLayout(pick)
        self.view = ComparisonView()
        self.view.setMinimumHeight(120)
        lay.addWidget(self.view, 1)
        lay.addLayout(self._legend())
        note = QLabel("Each strip is scaled to its own maximum; hover a token for its score.")
        note.setWordWrap(True)
        lay.addWidget(note)
        for combo in (self.left, self.right):
            combo.currentIndexChanged.connect(lambda *_: self.render())

    @staticmethod
    def _legend() -> QHBoxLayout:
        legend = QHBoxLayout()
        for cmap, words in ((DIVERGING_CMAP, ("signed: against", "for")),
                            (SEQUENTIAL_CMAP, ("unsigned: 0", "max"))):
            swatch = QLabel()
            swatch.setPixmap(gradient_pixmap(cmap, 60, 10))
            legend.addWidget(QLabel(words[0]))
            legend.addWidget(swatch)
            legend.addWidget(QLabel(words[1]))
            legend.addSpacing(12)
        legend.addStretch(1)
        return legend

    def methods(self) -> tuple[str, str]:
        """The two compared methods (ids)."""
        return self.left.currentData(), self.right.currentData()

    def set_prediction(self, prediction) -> None:
        """Compare explanations of ``prediction`` from now on (None: empty strips)."""
        self._prediction = prediction
        self.view.set_entries(None, [])

    def render(self) -> None:
        """Show the two methods' current results (scores and faithfulness) from the state."""
        entries = []
        for m in self.methods():
            res = self.state.explanations.get(m)
            if res is None:
                entries.append((METHOD_TITLES[m], "", None, False))
                continue
            f = res.faithfulness
            detail = (f"comprehensiveness {f.comprehensiveness_aopc:.3f}, sufficiency {f.sufficiency_aopc:.3f}"
                      + ("" if task_type(getattr(self._prediction, "task", SINGLE_LABEL)).reads_probabilities
                         else " in the output value")
                      + (" (signed)" if m in SIGNED_METHODS else ""))
            entries.append((METHOD_TITLES[m], detail, res.explanation.scores, bool(res.explanation.signed)))
        self.view.set_entries(None if self._prediction is None else self._prediction.document, entries)

    def comparison(self) -> list[tuple[str, np.ndarray | None]]:
        """The two compared methods as ``(title, scores float32 [T] or None)``; None: not computed yet."""
        self.view.flush()
        return [(title.text(), canvas.values if len(canvas.values) else None)
                for title, canvas in zip(self.view.titles, self.view.canvases)]
