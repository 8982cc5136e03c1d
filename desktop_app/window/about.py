"""The About dialog: the model card (README.md of the model folder, Markdown) and its metrics.json as a table."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTextBrowser, QVBoxLayout, QWidget

from model.records.info import ModelInfo

from .settings import APP_NAME


def about_html(info: ModelInfo | None) -> tuple[str, str]:
    """(model card markdown, metrics as HTML) for the About dialog of the model ``info`` (None: not loaded)."""
    card = (
        info.model_card
        if info is not None and info.model_card
        else "*No model card (README.md) in the model folder.*"
    )
    rows = []
    metrics = info.metrics if info is not None else {}

    def flat(prefix, obj):
        if isinstance(obj, dict):
            for k, v in obj.items():
                flat(f"{prefix}{k}.", v)
        elif not isinstance(obj, list):
            rows.append((prefix.rstrip("."), obj))

    flat("", metrics)
    table = "".join(
        f"<tr><td>{k}</td><td>{v:.4g}</td></tr>" if isinstance(v, float) else f"<tr><td>{k}</td><td>{v}</td></tr>"
        for k, v in rows[:60]
    )
    head = (
        f"<p><b>Model folder:</b> {info.model_dir}<br><b>Device:</b> {info.device_name}<br>"
        f"<b>Family:</b> {info.family}{'' if info.has_head else ' (attention only: no classification head)'}<br>"
        f"<b>Architecture:</b> {info.n_layers} layers, {info.n_heads} heads, d_model {info.d_model}, "
        f"max_len {info.max_len}, pooling {info.pooling}<br><b>Positional encoding:</b> {info.pe_kind}</p>"
        if info is not None
        else "<p>The model has not loaded.</p>"
    )
    metrics_html = head + (f"<table border=1 cellpadding=3>{table}</table>" if table else "<p>No metrics.json.</p>")
    return card, metrics_html

def about_dialog(parent: QWidget, info: ModelInfo | None) -> QDialog:
    """Show the About dialog: model card and metrics (non-modal; returned for tests)."""
    card, metrics_html = about_html(info)
    dlg = QDialog(parent)
    dlg.setWindowTitle(f"About {APP_NAME}")
    dlg.resize(700, 600)
    lay = QVBoxLayout(dlg)
    lay.addWidget(
        QLabel(
            f"<h2>{APP_NAME}</h2><p>See why a Transformer-encoder sentiment classifier, trained on IMDB "
            "(Maas et al. 2011), classifies a review the way it does.</p>"
        )
    )
    card_view = QTextBrowser()
    card_view.setMarkdown(card)
    metrics_view = QTextBrowser()
    metrics_view.setHtml(metrics_html)
    lay.addWidget(QLabel("<b>Model card</b>"))
    lay.addWidget(card_view, 2)
    lay.addWidget(QLabel("<b>Metrics</b>"))
    lay.addWidget(metrics_view, 1)
    buttons = QDialogButtonBox(QDialogButtonBox.Close)
    buttons.rejected.connect(dlg.close)
    lay.addWidget(buttons)
    dlg.show()
    return dlg
