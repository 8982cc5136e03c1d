"""The shareable outputs of a batch job: ``metrics.json`` and a self-contained ``report.html`` (issue 23, section 5).

* :func:`metrics_dict` / :func:`write_metrics_json`: exactly the issue's schema::

      {"n_scored": int, "n_failed": int, "n_with_gold": int,
       "accuracy": float | null, "f1": float | null,
       "confusion_matrix": {"labels": ["negative", "positive"], "matrix": [[tn, fp], [fn, tp]]} | null,
       "ece": float | null,
       "top_tokens": {"positive": [{"token": str, "score": float, "count": int}, ...], "negative": [...]} | null,
       "task": "single_label" | "multi_label" | "regression", "labels": [str, ...],
       "precision": "fp32" | "bf16" | "bf16 (n), fp32 (m)" | null,   # what the rows ran in (model/predictor/precision.py)
       # single-label:
       "macro_f1": float, "weighted_f1": float,
       "per_class": {label: {"precision": float, "recall": float, "f1": float, "support": int}, ...},
       # multi-label: "micro_f1", "macro_f1", "subset_accuracy", "hamming_loss", "per_class" (as above)
       # regression: "mae", "rmse", "pearson", "spearman"
      }

  Rows of ``matrix`` are gold labels, columns predicted labels, in the model's label order (issue 30: any number
  of classes; ``ece`` is the top label's). A negative/positive model keeps the keys it always had. The gold-dependent keys (accuracy, f1,
  confusion_matrix, ece) are null without gold labels (ece also with more than two classes); ``top_tokens`` is
  null when token scores were not computed. ``score`` is the mean attribution toward that side in log-odds units
  (:mod:`model.corpus.tokens`).
* :func:`render_report_html` / :func:`write_report_html`: one HTML file with the same numbers and inline SVG plots
  (:mod:`model.report.charts`): confusion matrix (up to 28 classes), per-class precision/recall/F1, the histogram of
  P(positive) (or the top label's probability, or the value) by gold label, reliability diagram with the ECE,
  accuracy by length and truncation; a regression's predicted-vs-gold scatter and error by length; the two ranked token lists with a bar plot. No network access, no
  scripts, no external fonts or images; every string from the data (model name, tokens, labels) is escaped.

Both writes are atomic (:mod:`model.files.atomic`); OSError propagates.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence

from model.files.atomic import atomic_write_bytes
from model.palette import NEUTRAL, class_colour
from model.tasks.types import TASK_TYPES, MultiLabel, Regression, SingleLabel, task_type
from model.corpus.metrics import CorpusMetrics, undefined_f1
from model.corpus.tokens import CorpusTokens
from model.report.counterfactuals import counterfactual_section
from model.report.charts import (
    NEG, POS, accuracy_bars_svg, confusion_svg, esc, histogram_svg, reliability_svg, scatter_svg, token_bars_svg
)

DEFAULT_TOP = 20
MAX_FAILURES = 20  # failures listed in the report
FEW_REVIEWS_PER_MIN_COUNT = 10
"""Fewer explained reviews than this times the token lists' ``min_count`` (a token in over a tenth of them) and
"What drives the corpus" says the corpus is too small for its ranking (issue 46: 8 reviews ranked only stopwords)."""
METRICS_KEYS = ("n_scored", "n_failed", "n_with_gold", "accuracy", "f1", "confusion_matrix", "ece", "top_tokens",
                "task", "labels", "precision")
TASK_KEYS = {kind: t.metric_keys for kind, t in TASK_TYPES.items()}
"""The keys each task adds after :data:`METRICS_KEYS` (null without gold labels), by task id
(:attr:`model.tasks.types.TaskType.metric_keys`)."""


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _per_class(metrics: CorpusMetrics) -> dict | None:
    pc = metrics.per_class
    if pc is None:
        return None
    return {name: {"precision": float(pc.precision[k]), "recall": float(pc.recall[k]), "f1": float(pc.f1[k]),
                   "support": int(pc.support[k])} for k, name in enumerate(metrics.labels)}


def _task_values(metrics: CorpusMetrics) -> dict:
    """The :data:`TASK_KEYS` of ``metrics.task`` with their values."""
    reg = metrics.regression
    values = {"macro_f1": _num(metrics.macro_f1), "weighted_f1": _num(metrics.weighted_f1),
              "per_class": _per_class(metrics), "micro_f1": _num(metrics.micro_f1),
              "subset_accuracy": _num(metrics.subset_accuracy), "hamming_loss": _num(metrics.hamming_loss),
              "mae": _num(reg.mae) if reg else None, "rmse": _num(reg.rmse) if reg else None,
              "pearson": _num(reg.pearson) if reg else None, "spearman": _num(reg.spearman) if reg else None}
    return {k: values[k] for k in TASK_KEYS[metrics.task]}


def metrics_dict(metrics: CorpusMetrics, tokens: CorpusTokens | None, top: int = DEFAULT_TOP,
                 precision: str | None = None) -> dict:
    """The ``metrics.json`` content (module docstring) as a dict with exactly :data:`METRICS_KEYS` and then the
    task's :data:`TASK_KEYS`, in order.

    Args:
        metrics: from :func:`model.corpus.metrics.corpus_metrics`.
        tokens: from :func:`model.corpus.tokens.corpus_token_scores`, or None (``top_tokens`` null).
        top: tokens per list.
        precision: what the rows ran in (:func:`model.batch.rows.precision_of`), or None (unknown).

    :func:`write_metrics_json` adds what other passes measured after these keys (``"comparison"``,
    ``"counterfactuals"``: ``{generator: {"n", "flip_rate", "mean_abs_delta", "mean_jsd", "by_class"}}``,
    :func:`model.counterfactuals.counterfactual_metrics`).
    """
    confusion = None
    if metrics.confusion is not None:
        confusion = {"labels": list(metrics.labels), "matrix": metrics.confusion.astype(int).tolist()}
    top_tokens = None
    if tokens is not None:
        top_tokens = {side: [{"token": t, "score": s, "count": n} for t, s, n in tokens.top(top, side)]
                      for side in ("positive", "negative")}
    return {
        "n_scored": metrics.n_scored, "n_failed": metrics.n_failed, "n_with_gold": metrics.n_with_gold,
        "accuracy": _num(metrics.accuracy), "f1": _num(metrics.f1), "confusion_matrix": confusion,
        "ece": _num(metrics.ece), "top_tokens": top_tokens, "task": metrics.task, "labels": list(metrics.labels),
        "precision": precision, **_task_values(metrics),
    }


def write_metrics_json(path: str | os.PathLike, metrics: CorpusMetrics, tokens: CorpusTokens | None,
                       top: int = DEFAULT_TOP, precision: str | None = None, extra: dict | None = None) -> None:
    """Write :func:`metrics_dict` to ``path`` as UTF-8 JSON (indented), atomically; ``extra``'s keys follow (e.g.
    ``"comparison"``, :func:`model.corpus.comparison.comparison_dict`). Raises OSError."""
    text = json.dumps({**metrics_dict(metrics, tokens, top, precision), **(extra or {})}, indent=2, ensure_ascii=False)
    atomic_write_bytes(path, (text + "\n").encode("utf-8"))


_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#222;margin:0;background:#f6f7f9}
main{max-width:1120px;margin:0 auto;padding:24px 28px 40px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:17px;margin:0 0 10px}
.sub{color:#666;margin:0 0 20px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:18px}
.card{flex:1 1 0;background:#fff;border:1px solid #e3e5e8;border-radius:8px;padding:10px 14px;min-width:105px}
.card b{display:block;font-size:22px}.card span{color:#666;font-size:12px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(500px,1fr));gap:16px}
section{background:#fff;border:1px solid #e3e5e8;border-radius:8px;padding:14px 16px;margin-bottom:16px}
section p{color:#555;font-size:13px;margin:6px 0 0}
svg{max-width:100%;height:auto}
table{border-collapse:collapse;font-size:13px;width:100%}
td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.lists{display:grid;grid-template-columns:1fr 1fr;gap:16px;margin-top:16px}
.wide svg{display:block;margin:0 auto}
footer{color:#888;font-size:12px;margin-top:18px}
"""


def _pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.{digits}f}%"


def _f(x: float | None, digits: int = 4) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def _cards(m: CorpusMetrics) -> str:
    cards = [(f"{m.n_scored:,}", "texts scored"), (f"{m.n_failed:,}", "failed"),
             (f"{m.n_with_gold:,}", "with gold labels")]
    if m.positive_share is not None:
        cards.append((_pct(m.positive_share), "predicted positive"))
    cards += task_type(m.task).pick(TASK_CARDS)(m)
    return '<div class="cards">' + "".join(f"<div class=\"card\"><b>{esc(v)}</b><span>{esc(k)}</span></div>"
                                         for v, k in cards) + "</div>"


def _regression_cards(m: CorpusMetrics) -> list[tuple[str, str]]:
    reg = m.regression
    return [(_f(reg and reg.mae), "MAE"), (_f(reg and reg.rmse), "RMSE"), (_f(reg and reg.pearson), "Pearson r"),
            (_f(reg and reg.spearman), "Spearman ρ")]


def _multi_label_cards(m: CorpusMetrics) -> list[tuple[str, str]]:
    return [(_pct(m.subset_accuracy), "subset accuracy"), (_f(m.micro_f1), "micro-F1"),
            (_f(m.macro_f1), "macro-F1"), (_f(m.hamming_loss), "Hamming loss")]


def _single_label_cards(m: CorpusMetrics) -> list[tuple[str, str]]:
    f1_name = {"positive": "F1 (positive class)", "micro": "micro-F1"}.get(m.f1_kind or "", "macro-F1")
    f1 = None if undefined_f1(m) else m.f1  # no class to score: "n/a", not 0 (issue 56)
    cards = [(_pct(m.accuracy), "accuracy"), (_f(f1), f1_name if m.f1_kind else "F1")]
    if m.f1_kind == "macro":
        cards.append((_f(m.weighted_f1), "weighted F1"))
    return [*cards, (_f(m.ece), "ECE (10 bins)")]


TASK_CARDS = {SingleLabel: _single_label_cards, MultiLabel: _multi_label_cards, Regression: _regression_cards}
"""The report's headline numbers of each task type, ``(value, caption)`` pairs after the counts (selected by
:meth:`model.tasks.types.TaskType.pick`)."""


def _section(title: str, svg: str, note: str = "") -> str:
    return f"<section><h2>{esc(title)}</h2>{svg}" + (f"<p>{esc(note)}</p>" if note else "") + "</section>"


def _per_class_section(m: CorpusMetrics) -> str:
    pc = m.per_class
    if pc is None:
        return ""
    body = "".join(f'<tr><td>{esc(n)}</td><td class="n">{pc.precision[k]:.3f}</td><td class="n">{pc.recall[k]:.3f}'
                   f'</td><td class="n">{pc.f1[k]:.3f}</td><td class="n">{int(pc.support[k]):,}</td></tr>'
                   for k, n in enumerate(m.labels))
    return ("<section><h2>Per class</h2><table><tr><th>label</th><th>precision</th><th>recall</th><th>F1</th>"
            f"<th>support (gold)</th></tr>{body}</table><p>Gold rows only; 0 where a ratio is 0/0.</p></section>")


def _regression_sections(m: CorpusMetrics) -> list[str]:
    reg, e = m.regression, m.error_by_length
    out = [_section("Predicted against gold", scatter_svg(reg.gold, reg.predicted, "gold", "predicted"),
                    "Each dot a text with a gold value; dashed: predicted = gold.")]
    if e is not None:
        keep = [i for i, n in enumerate(e.names) if e.gold_counts[i]]
        rows = "".join(f'<tr><td>{esc(e.names[i])}</td><td class="n">{e.accuracy[i]:.3f}</td>'
                       f'<td class="n">{int(e.gold_counts[i]):,}</td></tr>' for i in keep)
        out.append("<section><h2>Error by length (tokens)</h2><table><tr><th>length</th><th>mean absolute error</th>"
                   f"<th>texts</th></tr>{rows}</table></section>")
    return out


def _gold_sections(m: CorpusMetrics) -> list[str]:
    if not m.has_gold:
        return ["<section><h2>Accuracy, confusion matrix, calibration</h2><p>No gold labels: these need texts "
                "with known labels (pos/ and neg/ folders, folders named after the classes, or a label column)."
                "</p></section>"]
    if not task_type(m.task).reads_probabilities:  # a value: predicted against gold, the error by length
        return _regression_sections(m)
    out = []
    if m.confusion is not None:
        out.append(_section("Confusion matrix", confusion_svg(m.confusion, m.labels),
                            "Rows: gold label; columns: predicted label; shade and percentages: share of the row."))
    out.append(_per_class_section(m))
    if m.reliability is not None:
        r = m.reliability
        out.append(_section("Reliability diagram", reliability_svg(r.edges, r.confidence, r.accuracy, r.counts, m.ece),
                            f"Accuracy per bin of the predicted class's probability ({m.n_bins} equal-width bins; "
                            "dashed: perfect calibration; shaded: the gap). ECE as in Guo et al. 2017."))
    return out


def _histogram(m: CorpusMetrics) -> str:
    h = m.histogram
    if h.counts_by_gold is not None:  # each class its palette colour, by its place in the model's labels
        groups = [(f"gold {name}", h.counts_by_gold[i], class_colour(i)) for i, name in enumerate(m.labels)]
        note = "Overlaid per gold label; texts without a gold label are not in these bars."
    else:
        groups, note = [("all texts", h.counts, NEUTRAL)], "Every scored text."
    by = " by gold label" if h.counts_by_gold is not None else ""
    return _section(f"{m.score_name}{by}", histogram_svg(h.edges, groups, m.score_name), note)


def _length_section(m: CorpusMetrics) -> str:
    if not m.has_gold or not task_type(m.task).reads_probabilities:
        return ""
    bl, bt = m.by_length, m.by_truncation
    groups = [("by length in tokens", bl.names, bl.accuracy, bl.gold_counts),
              ("truncated or not", bt.names, bt.accuracy, bt.gold_counts)]
    return _section("Accuracy by review length and truncation", accuracy_bars_svg(groups, "Accuracy by length"),
                    "Token bins of each whole review ([CLS] included). A review longer than the model's limit is "
                    "read whole, in windows (the default), and counted in the bins above the limit; "
                    "\u201ctruncated\u201d: cut to the limit instead (--long-text head_tail, or a sentence pair); "
                    "n: reviews with a gold label.")


def _failures_section(m: CorpusMetrics, failures: Sequence[tuple[str, str]]) -> str:
    if not m.n_failed:
        return ""
    listed = "".join(f"<tr><td>{esc(src)}</td><td>{esc(status)}</td></tr>" for src, status in failures[:MAX_FAILURES])
    more = m.n_failed - min(len(failures), MAX_FAILURES)
    note = f"<p>{m.n_failed:,} input(s) could not be scored" + (f"; {more:,} more not listed" if more and listed
                                                               else "") + ".</p>"
    table = f"<table><tr><th>source</th><th>status</th></tr>{listed}</table>" if listed else ""
    return f"<section><h2>Not scored</h2>{table}{note}</section>"


def _token_table(rows: Sequence[tuple[str, float, int]], colour: str) -> str:
    body = "".join(f'<tr><td class="n">{i}</td><td>{esc(t)}</td><td class="n">{s:.3f}</td><td class="n">{n:,}</td>'
                   f"</tr>" for i, (t, s, n) in enumerate(rows, 1))
    return (f'<table><tr><th>#</th><th style="color:{colour}">token</th><th>score</th><th>reviews</th></tr>'
            f"{body}</table>")


def _token_section(tokens: CorpusTokens | None, top: int) -> str:
    if tokens is None:
        return "<section><h2>What drives the corpus</h2><p>Token scores were not computed.</p></section>"
    pos, neg = tokens.top(top, "positive"), tokens.top(top, "negative")
    partial = "" if tokens.complete else f" Stopped early: over the first {tokens.n_explained:,} reviews."
    if tokens.n_explained < FEW_REVIEWS_PER_MIN_COUNT * tokens.min_count:  # issue 46: a tiny corpus ranks stopwords
        partial += (f" Too few reviews for this ranking: a token must appear in at least {tokens.min_count} of the "
                    f"{tokens.n_explained:,} reviews explained, which mostly common words such as \u201cthe\u201d or "
                    f"\u201cis\u201d do; a few hundred reviews (or a smaller --min-count) show what drives the corpus.")
    method = "gradient \u00d7 input" if tokens.method == "grad_x_input" else "integrated gradients"
    toward, against = tokens.sides
    note = (f"Per word and bigram, the mean {method} attribution toward \u201c{toward}\u201d "
            f"({'log-odds' if len(tokens.labels) == 2 else 'logit'} units; toward \u201c{against}\u201d: minus it) "
            f"over the reviews containing it, of "
            f"{tokens.n_explained:,} reviews explained; only tokens in at least {tokens.min_count} reviews (the count "
            f"is in brackets).{partial}")
    lists = (f'<div class="lists"><div><h2 style="color:{POS}">Toward {esc(toward)}</h2>{_token_table(pos, POS)}</div>'
             f'<div><h2 style="color:{NEG}">Toward {esc(against)}</h2>{_token_table(neg, NEG)}</div></div>')
    return _section("What drives the corpus", token_bars_svg(pos[:top], neg[:top]), note).replace(
        "</section>", lists + "</section>").replace("<section>", '<section class="wide">', 1)


def render_report_html(metrics: CorpusMetrics, tokens: CorpusTokens | None, *, model_name: str, date: str,
                       source: str = "", top: int = DEFAULT_TOP, elapsed_s: float | None = None,
                       failures: Sequence[tuple[str, str]] = (), precision: str | None = None,
                       sections: Sequence[str] = (), counterfactuals: dict | None = None) -> str:
    """The report as one self-contained HTML document (UTF-8 text; no scripts, no external resources).

    Args:
        metrics: the rows' :class:`CorpusMetrics`.
        tokens: the :class:`CorpusTokens`, or None (the section says they were not computed).
        model_name: shown in the title (escaped).
        date: shown under the title, e.g. ``"2025-01-31 14:02"`` (escaped).
        source: what was scored, e.g. the input paths (escaped).
        top: tokens per ranked list.
        elapsed_s: scoring time to mention, if known.
        failures: ``(source, status)`` of rows not scored, the first :data:`MAX_FAILURES` listed (escaped).
        precision: what the rows ran in (:func:`model.batch.rows.precision_of`), shown after the model; None: not
            shown.
        sections: more sections (HTML, already escaped), placed after the plots, e.g. the two-model comparison
            (:func:`model.report.comparison.comparison_section`) and the corpus map (:mod:`model.report.corpus_map`).
        counterfactuals: the counterfactual edits' metrics by generator, or None (no section).
    """
    m = metrics
    sub = (f"Model: {model_name}" + (f" \u00b7 precision {precision}" if precision else "") + f" \u00b7 {date}"
           + (f" \u00b7 {source}" if source else ""))
    parts = [_cards(m), '<div class="grid">', *_gold_sections(m), _histogram(m), _length_section(m), "</div>",
             *sections, _token_section(tokens, top), counterfactual_section(counterfactuals), _failures_section(m, failures)]
    foot = f"{m.n_rows:,} rows ({m.n_scored:,} scored, {m.n_failed:,} failed)"
    if elapsed_s is not None:
        foot += f", scored in {elapsed_s:,.1f} s"
    foot += ". Generated by attention-explorer-score."
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>Corpus report \u2014 {esc(model_name)}</title><style>{_CSS}</style></head><body><main>"
            f"<h1>Corpus report</h1><p class=\"sub\">{esc(sub)}</p>{''.join(parts)}"
            f"<footer>{esc(foot)}</footer></main></body></html>\n")


def write_report_html(path: str | os.PathLike, metrics: CorpusMetrics, tokens: CorpusTokens | None, **kwargs) -> None:
    """Write :func:`render_report_html` (same keyword arguments) to ``path`` as UTF-8, atomically. Raises OSError."""
    atomic_write_bytes(path, render_report_html(metrics, tokens, **kwargs).encode("utf-8"))


__all__ = ["DEFAULT_TOP", "MAX_FAILURES", "METRICS_KEYS", "metrics_dict", "render_report_html", "write_metrics_json",
           "write_report_html"]
