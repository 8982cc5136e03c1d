"""The Map tab's explored text (issue 42): the text shown in the explorer as a star on the corpus map, placed with the
fitted projection, and its 10 nearest texts by cosine, ringed on the map and listed with their labels and gold.

The placing runs on its own worker (the "corpus-map-explored" thread,
:func:`desktop_app.workers.corpus.map_jobs.explored_job`); activating a listed text opens it in the explorer
(:meth:`desktop_app.panels.corpus.map_panel.CorpusMapPanel.open_row`).
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QListWidget, QVBoxLayout, QWidget

from desktop_app.workers.corpus.map_jobs import explored_job
from desktop_app.workers.handle import EXPLANATION_NICE
from desktop_app.workers.jobs import Jobs


class NearestTexts(QWidget):
    """The explored text's star and its nearest texts, for the map panel ``panel``
    (:class:`~desktop_app.panels.corpus.map_panel.CorpusMapPanel`: its projection, points, plot, status, batch table).

    Attributes:
        list: the nearest texts (the panel's ``neighbours``), most similar first; each item's data 256 is its table
            row.
        neighbour_rows: the nearest texts' table rows, most similar first.
        explored: ``(text, text_pair)`` being explored, or None.
        explored_at: the explored text's :class:`desktop_app.workers.corpus.map_jobs.Explored` record, once placed, or None.
    """

    def __init__(self, panel) -> None:
        super().__init__()
        self.panel = panel
        self.explored = None  # (text, pair) being explored
        self.neighbour_rows: list[int] = []
        self.explored_at = None  # the explored text's Explored record, once placed
        self.handle = Jobs("corpus-map-explored", EXPLANATION_NICE, parent=self)
        self.list = QListWidget()
        self.list.itemActivated.connect(lambda item: panel.open_row(int(item.data(256))))
        self.list.setMinimumWidth(120)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel("Nearest to the explored text (cosine):"))
        lay.addWidget(self.list)

    def set_explored(self, text: str | None, text_pair: str | None = None) -> None:
        """The text shown in the explorer (None: none): placed on the map with its nearest texts."""
        self.explored = None if not text else (text, text_pair)
        self.place()

    def place(self) -> None:
        """Place the explored text with the panel's current projection (on the worker), or clear the marks."""
        m = self.panel
        if self.explored is None or m.projector is None or m.predictor is None:
            m.plot.set_marks(None)
            self.list.clear()
            return
        text, pair = self.explored
        own = next((i for i, r in zip(m.vectors.rows.tolist(), m.rows) if r.text == text
                    and r.text_pair == pair), None)
        self.handle.run(explored_job, m.predictor, text, pair, m.batch.row_vectors.spec,
                        m.projector, m.vectors, own, on_result=self._on_explored,
                        on_error=lambda exc: m.status.setText(f"The explored text cannot be placed: {exc}"))

    def _on_explored(self, e) -> None:
        self.explored_at = e
        self.neighbour_rows = [int(i) for i in e.rows]
        self.list.clear()
        table = self.panel.batch.table_model
        for i, sim in zip(self.neighbour_rows, e.similarity, strict=True):
            r = table.row_at(i)
            gold = f", gold {r.gold}" if r.has_gold else ""
            self.list.addItem(f"{sim:.3f}  {r.label or r.value}{gold}: {' '.join(r.text.split())[:90]}")
            self.list.item(self.list.count() - 1).setData(256, i)
        self.mark()

    def mark(self) -> None:
        """Draw the star and the rings on the panel's map (none before the explored text is placed)."""
        e, m = self.explored_at, self.panel
        if e is None or self.explored is None:
            m.plot.set_marks(None)
            return
        at = {int(t): k for k, t in enumerate(m.vectors.rows)}
        m.plot.set_marks(e.xy, [at[i] for i in self.neighbour_rows if i in at])

    def clear(self) -> None:
        """The map was emptied: forget the placed text and its list (the explored text stays, to place again)."""
        self.explored_at = None
        self.list.clear()

    def shutdown(self) -> None:
        """Stop the worker."""
        self.handle.shutdown()


__all__ = ["NearestTexts"]
