"""The report's "What if" section (issue 43): the counterfactual edits' metrics per generator and per source class,
as one escaped HTML table (:func:`counterfactual_section`; the numbers of :func:`model.counterfactuals.
counterfactual_metrics`)."""

from __future__ import annotations

from model.report.charts import esc

_NOTE = ("Flip rate: the share of a generator's edits that changed the model's verdict (a class, a label set, or the "
         "value's side of the threshold; LIT's swap rate). Mean |\u0394|: the mean change of the source's predicted "
         "class's probability (or of the value). Mean JSD: the mean Jensen-Shannon divergence of the two probability "
         "vectors, in bits. ablation_flip and hotflip make one edit per input: their flip rate is the share of "
         "inputs they could flip.")


def _cell(x, fmt: str) -> str:
    return '<td class="n">' + ("\u2013" if x is None else format(x, fmt)) + "</td>"


def _row(name: str, m: dict, indent: bool = False) -> str:
    label = ("&nbsp;&nbsp;&nbsp;" if indent else "<b>") + esc(name) + ("" if indent else "</b>")
    return (f"<tr><td>{label}</td>" + _cell(m["n"], ",") + _cell(None if m["flip_rate"] is None else m["flip_rate"] * 100, ".1f")
            + _cell(m["mean_abs_delta"], ".4f") + _cell(m["mean_jsd"], ".4f") + "</tr>")


def counterfactual_section(metrics: dict | None) -> str:
    """The section's HTML for ``{generator: {"n", "flip_rate", "mean_abs_delta", "mean_jsd", "by_class"}}``; ""
    when ``metrics`` is None (no counterfactuals were asked for)."""
    if metrics is None:
        return ""
    rows = []
    for name, m in metrics.items():
        rows.append(_row(name, m))
        rows += [_row(f"source {cls}", sub, indent=True) for cls, sub in m.get("by_class", {}).items()]
    head = ("<tr><th>generator / source class</th><th>edits</th><th>flip rate %</th><th>mean |\u0394|</th>"
            "<th>mean JSD</th></tr>")
    body = "".join(rows) or '<tr><td colspan="5">no edits were made</td></tr>'
    return (f"<section><h2>What if: counterfactual edits</h2><table>{head}{body}</table>"
            f"<p>{esc(_NOTE)}</p></section>")


__all__ = ["counterfactual_section"]
