"""The two-model comparison in words and in ``report.html`` (issue 44): :func:`comparison_line` (the command line's
stderr) and :func:`comparison_section` (a self-contained HTML section: the headline numbers, the A-versus-B
confusion as a table, McNemar's test and what it means). Every string from the data is escaped."""

from __future__ import annotations

from pathlib import Path

from model.records.comparison import ComparisonMetrics

from model.report.charts import esc


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


def _p(p: float | None) -> str:
    return "n/a" if p is None else (f"{p:.3g}" if p >= 1e-4 else f"{p:.2e}")


def _name(folder: str) -> str:
    return Path(folder).name or folder or "?"


def verdict(m: ComparisonMetrics, alpha: float = 0.05) -> str:
    """What McNemar's test says, in one sentence (at level ``alpha``)."""
    mc = m.mcnemar
    if mc.p_value is None:
        return ("No row with a gold label was right for one model and wrong for the other: nothing to test."
                if m.n_with_gold else "No rows with gold labels: McNemar's test needs them.")
    better = "A" if mc.b01 > mc.b10 else "B"
    if mc.p_value < alpha:
        return (f"The difference is significant at {alpha:g} (p = {_p(mc.p_value)}): model {better} is right more "
                f"often on the rows where they disagree ({max(mc.b01, mc.b10):,} to {min(mc.b01, mc.b10):,}).")
    return (f"The difference is not significant at {alpha:g} (p = {_p(mc.p_value)}): {mc.b01:,} rows favour A and "
            f"{mc.b10:,} favour B, which chance alone explains.")


def comparison_line(m: ComparisonMetrics) -> str:
    """One line for stderr, e.g. ``"compared with model B (old): A 91.6%, B 91.2% on 2,000 with gold · agreement
    96.1% · McNemar b01 40, b10 32, p 0.41"``."""
    parts = [f"compared with model B ({_name(m.b_model)}) on {m.n_compared:,} rows"]
    if m.n_with_gold:
        parts.append(f"accuracy A {_pct(m.a_accuracy)}, B {_pct(m.b_accuracy)} on {m.n_with_gold:,} with gold")
    if m.agreement is not None:
        parts.append(f"agreement {_pct(m.agreement)}")
    if m.mean_abs_difference is not None:
        parts.append(f"mean |A - B| {m.mean_abs_difference:.4g}")
    mc = m.mcnemar
    parts.append(f"McNemar b01 {mc.b01:,}, b10 {mc.b10:,}, p {_p(mc.p_value)}")
    return " \u00b7 ".join(parts)


def _confusion_table(m: ComparisonMetrics) -> str:
    if m.confusion is None:
        return ""
    head = "".join(f"<th>B: {esc(n)}</th>" for n in m.labels)
    body = "".join(f"<tr><th>A: {esc(n)}</th>" + "".join(f'<td class="n">{int(v):,}</td>' for v in m.confusion[i])
                   + "</tr>" for i, n in enumerate(m.labels))
    return (f"<table><tr><th></th>{head}</tr>{body}</table><p>Rows: model A's prediction; columns: model B's; "
            "the diagonal is where they agree.</p>")


def slice_rows(m: ComparisonMetrics) -> list[tuple[str, ...]]:
    """The per-length-slice table (:attr:`ComparisonMetrics.by_length`) as text cells: slice, rows compared,
    accuracy A, accuracy B, agreement, b01, b10, p (exact)."""
    return [(name, f"{s.n_compared:,}", _pct(s.a_accuracy), _pct(s.b_accuracy), _pct(s.agreement),
             f"{s.mcnemar.b01:,}", f"{s.mcnemar.b10:,}", _p(s.mcnemar.p_value)) for name, s in m.by_length]


SLICE_HEADERS = ("length (tokens)", "rows", "accuracy A", "accuracy B", "agreement", "b01", "b10", "McNemar p")
"""The columns of :func:`slice_rows`."""


def _slice_table(m: ComparisonMetrics) -> str:
    if not m.by_length:
        return ""
    head = "".join(f"<th>{esc(h)}</th>" for h in SLICE_HEADERS)
    body = "".join("<tr>" + "".join(f'<td class="n">{esc(c)}</td>' for c in row) + "</tr>" for row in slice_rows(m))
    return (f"<table><tr>{head}</tr>{body}</table><p>Per length slice (A's token count, as in the Corpus dock): "
            "McNemar's exact test of each slice on its own rows with gold (no correction for testing several "
            "slices).</p>")


def comparison_section(m: ComparisonMetrics) -> str:
    """The report's "Two models" section (HTML, escaped)."""
    mc = m.mcnemar
    cards = [(_pct(m.a_accuracy), "accuracy A"), (_pct(m.b_accuracy), "accuracy B"), (_pct(m.agreement), "agreement"),
             (f"{mc.b01:,}", "b01: A right, B wrong"), (f"{mc.b10:,}", "b10: A wrong, B right"),
             (_p(mc.p_value), "McNemar p (exact)")]
    if m.mean_abs_difference is not None:
        cards[2] = (f"{m.mean_abs_difference:.4g}", "mean |A - B|")
    card_html = "".join(f'<div class="card"><b>{esc(v)}</b><span>{esc(k)}</span></div>' for v, k in cards)
    note = (f"Model A: {m.a_model or '?'}. Model B: {m.b_model or '?'}. {m.n_compared:,} rows scored by both, "
            f"{m.n_with_gold:,} with gold labels (the accuracies and McNemar's test use those). {verdict(m)}")
    return (f'<section class="wide"><h2>Two models: A against B</h2><div class="cards">{card_html}</div>'
            f"{_confusion_table(m)}<p>{esc(note)}</p>{_slice_table(m)}</section>")


__all__ = ["SLICE_HEADERS", "comparison_line", "comparison_section", "slice_rows", "verdict"]
