"""Export of a view as PNG or SVG, written atomically (:func:`model.files.atomic.atomic_path`).

PNG: pyqtgraph's ImageExporter for plots (widgets with ``export_item()``), ``QWidget.grab``
otherwise. SVG: pyqtgraph's SVGExporter, falling back to ``QSvgGenerator``. Errors: ValueError for
an unsupported suffix, OSError when the file cannot be written.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtWidgets import QWidget

from model.files.atomic import atomic_path

from .settings import APP_NAME

log = logging.getLogger(__name__)


def export_widget(widget: QWidget, path: str | Path) -> None:
    """Export ``widget`` to ``path``; the suffix picks PNG or SVG.

    PNG: pyqtgraph's ImageExporter for plots, ``QWidget.grab`` otherwise. SVG:
    pyqtgraph's SVGExporter, falling back to ``QSvgGenerator``. The file is
    written to a temporary name and renamed (atomic).

    Raises:
        ValueError: a suffix other than .png/.svg.
        OSError: the file cannot be written.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError("choose a file name ending in .png or .svg")
    if hasattr(widget, "flush"):
        widget.flush()
    with atomic_path(path, suffix=f".partial{suffix}") as tmp_name:
        tmp = Path(tmp_name)
        tmp.unlink()  # the exporters create the file themselves; its absence means they failed
        if suffix == ".png" and hasattr(widget, "export_item"):
            from pyqtgraph import exporters

            exporters.ImageExporter(widget.export_item()).export(fileName=str(tmp))
        elif suffix == ".png":
            if not widget.grab().save(str(tmp), "PNG"):
                raise OSError(f"cannot write {path}")
        else:
            export_svg(widget, tmp)
        if not tmp.is_file():
            raise OSError(f"cannot write {path}")

def export_svg(widget: QWidget, out: Path) -> None:
    """SVG via pyqtgraph's SVGExporter, or QSvgGenerator when that fails (pyqtgraph 0.14 cannot parse
    the path data Qt 6.12 writes) or the widget is not a plot."""
    if hasattr(widget, "export_item"):
        from pyqtgraph import exporters

        try:
            exporters.SVGExporter(widget.export_item()).export(fileName=str(out))
            return
        except Exception as exc:  # noqa: BLE001 - fall back to Qt's own SVG writer
            log.info("pyqtgraph SVG export failed (%s: %s); using QSvgGenerator", type(exc).__name__, exc)
            out.unlink(missing_ok=True)
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QPainter, QRegion
    from PySide6.QtSvg import QSvgGenerator

    gen = QSvgGenerator()
    gen.setFileName(str(out))
    gen.setSize(widget.size())
    gen.setViewBox(widget.rect())
    gen.setTitle(APP_NAME)
    painter = QPainter(gen)
    try:
        flags = QWidget.RenderFlag.DrawWindowBackground | QWidget.RenderFlag.DrawChildren
        # QWidget's render, also for a QGraphicsView (a pyqtgraph plot), whose own render() draws its scene instead
        QWidget.render(widget, painter, QPoint(0, 0), QRegion(widget.rect()), flags)
    finally:
        painter.end()
