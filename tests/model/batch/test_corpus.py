"""Corpus metrics, corpus token scores, metrics.json, the HTML report and the CLI's --report/--metrics (issue 23).

Every metric is compared with scikit-learn's on the same rows, the ECE with a direct loop over Guo et al.'s
definition, and the batched token scores with a naive recomputation (one review at a time, through
``Predictor.explain``, words reassembled by hand).
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from imdb_data import imdb_sample
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

from model.batch import ResultRow, read_results
from model.scorer import main as score
from model.corpus.metrics import CorpusMetrics, corpus_metrics, reliability
from model.corpus.tokens import CorpusTokens, corpus_token_scores
from model.report.report import METRICS_KEYS, TASK_KEYS, metrics_dict, render_report_html, write_metrics_json, write_report_html

ROOT = Path(__file__).resolve().parents[3]
BUNDLED_MODEL = ROOT / "resources" / "model"


def make_rows(n: int, seed: int, gold_share: float = 0.7, failed_share: float = 0.05,
              labels=("negative", "positive")) -> list[ResultRow]:
    """Random rows: P(positive) skewed toward the gold label, some without gold, some failed, some truncated."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        if rng.random() < failed_share:
            rows.append(ResultRow(f"f{i}", "", "", (), 0, False, str(rng.choice(["", labels[0]])), None,
                                  "unreadable"))
            continue
        g = labels[int(rng.integers(len(labels)))]
        if len(labels) == 2:
            p = float(np.clip(rng.normal(0.75 if g == labels[1] else 0.25, 0.25), 0, 1))
            pred = labels[1] if p >= 0.5 else labels[0]
            probs = (1.0 - p, p)
        else:
            pred = g if rng.random() < 0.6 else labels[int(rng.integers(len(labels)))]
            q = np.sort(rng.dirichlet(np.ones(len(labels))))[::-1]  # the predicted class gets the largest
            k = labels.index(pred)
            probs = tuple(float(x) for x in np.concatenate([q[1:k + 1], q[:1], q[k + 1:]]))
        gold = g if rng.random() < gold_share else ""
        tokens = int(rng.integers(3, 513))
        rows.append(ResultRow(f"s{i}", f"text {i}", pred, probs, tokens, bool(tokens == 512 and rng.random() < 0.9),
                              gold, (pred == gold) if gold else None, "ok", labels=tuple(labels)))
    return rows


def gold_pairs(rows):
    ok = [r for r in rows if r.ok and r.gold]
    return [r.gold for r in ok], [r.label for r in ok]


def ece_loop(rows, n_bins: int = 10) -> float:
    """Guo et al. 2017, eq. 3, written as a plain loop over the bins (B_m = ((m-1)/M, m/M], 0 in the first)."""
    pairs = []
    for r in rows:
        if r.ok and r.gold:
            conf = r.probabilities[r.labels.index(r.label)]
            pairs.append((conf, r.label == r.gold))
    edges = np.linspace(0, 1, n_bins + 1)
    total = 0.0
    for m in range(n_bins):
        lo, hi = edges[m], edges[m + 1]
        members = [(c, ok) for c, ok in pairs if (lo < c <= hi) or (m == 0 and c == 0)]
        if members:
            acc = sum(ok for _, ok in members) / len(members)
            conf = sum(c for c, _ in members) / len(members)
            total += len(members) / len(pairs) * abs(acc - conf)
    return total


# ---------------------------------------------------------------------------------------------------------------
# Metrics


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metrics_equal_sklearn(seed):
    rows = make_rows(3000, seed)
    m = corpus_metrics(rows)
    y, yhat = gold_pairs(rows)
    assert m.n_rows == 3000 and m.n_scored + m.n_failed == 3000
    assert m.n_failed == sum(not r.ok for r in rows) > 0
    assert m.n_with_gold == len(y) < m.n_scored
    assert m.labels == ("negative", "positive") and m.f1_kind == "positive"
    assert m.accuracy == pytest.approx(accuracy_score(y, yhat), abs=1e-12)
    assert m.f1 == pytest.approx(f1_score(y, yhat, pos_label="positive"), abs=1e-12)
    np.testing.assert_array_equal(m.confusion, confusion_matrix(y, yhat, labels=["negative", "positive"]))
    assert m.ece == pytest.approx(ece_loop(rows), abs=1e-12)
    assert m.positive_share == pytest.approx(np.mean([r.label == "positive" for r in rows if r.ok]))


def test_metrics_of_real_imdb_rows_equal_sklearn(bundled_predictor):
    from model.batch import Record, normalize_gold, score_records

    data = imdb_sample("first80")
    records = [Record(f"imdb:{i}", d["text"], normalize_gold(d["label"]) if i % 4 else None)
               for i, d in enumerate(data)] + [Record("bad.txt", None, "positive", "unreadable")]
    rows = [r for chunk in score_records(bundled_predictor, records) for r in chunk]
    m = corpus_metrics(rows)
    y, yhat = gold_pairs(rows)
    assert (m.n_scored, m.n_failed, m.n_with_gold) == (80, 1, 60)
    assert m.accuracy == pytest.approx(accuracy_score(y, yhat))
    assert m.f1 == pytest.approx(f1_score(y, yhat, pos_label="positive"))
    np.testing.assert_array_equal(m.confusion, confusion_matrix(y, yhat, labels=["negative", "positive"]))
    assert m.ece == pytest.approx(ece_loop(rows), abs=1e-12)
    assert m.accuracy > 0.8


def test_other_labels_use_macro_f1_and_no_ece():
    rows = make_rows(2000, 5, labels=("anger", "joy", "sadness"))
    m = corpus_metrics(rows)
    y, yhat = gold_pairs(rows)
    assert m.labels == ("anger", "joy", "sadness") and m.f1_kind == "macro"
    assert m.f1 == pytest.approx(f1_score(y, yhat, average="macro"), abs=1e-12)
    assert m.accuracy == pytest.approx(accuracy_score(y, yhat), abs=1e-12)
    np.testing.assert_array_equal(m.confusion, confusion_matrix(y, yhat, labels=list(m.labels)))
    assert m.ece == pytest.approx(ece_loop(rows), abs=1e-12)  # top-label calibration for any C (issue 30)
    assert m.histogram.counts_by_gold.shape == (3, len(m.histogram.counts))


def test_binary_names_of_another_model_use_macro_f1():
    rows = make_rows(500, 9, labels=("LABEL_0", "LABEL_1"))
    m = corpus_metrics(rows)
    y, yhat = gold_pairs(rows)
    assert m.labels == ("LABEL_0", "LABEL_1") and m.f1_kind == "macro"
    assert m.f1 == pytest.approx(f1_score(y, yhat, average="macro"))
    assert m.ece is not None  # two classes: the predicted class's probability is known


def test_no_gold_labels():
    rows = make_rows(400, 3, gold_share=0.0)
    m = corpus_metrics(rows)
    assert m.n_with_gold == 0 and not m.has_gold and m.n_scored > 0
    assert (m.accuracy, m.f1, m.f1_kind, m.confusion, m.ece, m.reliability) == (None,) * 6
    assert m.histogram.counts_by_gold is None and m.histogram.counts.sum() == m.n_scored
    assert np.all(np.isnan(m.by_length.accuracy)) and m.by_length.counts.sum() == m.n_scored
    d = metrics_dict(m, None)
    assert all(d[k] is None for k in ("accuracy", "f1", "confusion_matrix", "ece", "top_tokens"))


def test_a_model_without_classes_gets_metrics_without_class_fields():
    """Issue 56: the rows of a classifier described with the label set of a model without a classification head
    (``labels=()``, all-MiniLM-L6-v2 in attention-only mode) raised ``need at least one array to stack``."""
    rows = make_rows(300, 4)
    for task in ("single_label", "multi_label"):
        m = corpus_metrics(rows if task == "single_label" else [], labels=(), task=task)
        assert m.labels == () and m.confusion is None and m.f1 is None and m.per_class is None
        assert m.histogram.counts_by_gold is None and m.histogram.counts.sum() == 0  # no class: no probability
    m = corpus_metrics(rows, labels=())
    y, yhat = gold_pairs(rows)
    assert m.n_with_gold == len(y) > 0 and m.accuracy == pytest.approx(accuracy_score(y, yhat))
    assert (m.ece, m.reliability) == (None, None)
    d = metrics_dict(m, None)
    assert d["f1"] is None and d["confusion_matrix"] is None


def test_empty_and_all_failed():
    for rows in ([], [ResultRow("x", "", "", (), 0, False, "positive", None, "unreadable")]):
        m = corpus_metrics(rows)
        assert m.n_scored == 0 and m.n_failed == len(rows) and m.accuracy is None and m.positive_share is None
        assert m.score.shape == (0,)


def test_ece_bins_edges_and_reliability():
    conf = np.array([0.0, 0.1, 0.5, 0.55, 0.6, 0.6000001, 0.7, 0.95, 1.0, 1.0])
    correct = np.array([0, 1, 1, 0, 1, 1, 0, 1, 1, 1], dtype=bool)
    ece, bins = reliability(conf, correct, 10)
    edges = np.linspace(0, 1, 11)
    want = [np.sum(((conf > lo) & (conf <= hi)) | ((m == 0) & (conf == 0)))
            for m, (lo, hi) in enumerate(zip(edges[:-1], edges[1:]))]
    np.testing.assert_array_equal(bins.counts, want)
    direct = sum(abs(correct[(conf > lo) & (conf <= hi) | ((m == 0) & (conf == 0))].mean()
                     - conf[(conf > lo) & (conf <= hi) | ((m == 0) & (conf == 0))].mean()) * c / len(conf)
                 for m, (lo, hi, c) in enumerate(zip(edges[:-1], edges[1:], want)) if c)
    assert ece == pytest.approx(direct, abs=1e-12)
    assert np.isnan(bins.accuracy[2]) and not bins.counts.flags.writeable
    with pytest.raises(ValueError):
        reliability(conf, correct, 0)


def test_length_and_truncation_slices():
    rows = make_rows(2000, 4)
    m = corpus_metrics(rows)
    ok = [r for r in rows if r.ok]

    def acc(sel):
        g = [r for r in ok if sel(r) and r.gold]
        return sum(r.label == r.gold for r in g) / len(g) if g else math.nan

    bins = [(1, 128), (129, 256), (257, 384), (385, 512), (513, 1024), (1025, 10**9)]
    for i, (lo, hi) in enumerate(bins):
        def sel(r, lo=lo, hi=hi):
            return not r.truncated and lo <= r.num_tokens <= hi
        assert m.by_length.counts[i] == sum(map(sel, ok))
        assert m.by_length.accuracy[i] == pytest.approx(acc(sel), nan_ok=True)
    assert m.by_length.names[-1] == "truncated" and m.by_length.counts[-1] == sum(r.truncated for r in ok) > 0
    assert m.by_truncation.counts.tolist() == [sum(not r.truncated for r in ok), sum(r.truncated for r in ok)]
    assert m.by_truncation.accuracy[1] == pytest.approx(acc(lambda r: r.truncated))
    p = np.array([r.probability("positive") for r in ok])
    np.testing.assert_array_equal(m.histogram.counts, np.histogram(p, m.histogram.edges)[0])


def test_metrics_are_immutable():
    """Their speed on 25,000 rows: ``python -m benchmarks.corpus_metrics_tasks`` (never asserted in tests)."""
    m = corpus_metrics(make_rows(2000, 7))
    assert isinstance(m, CorpusMetrics)
    with pytest.raises(AttributeError):
        m.accuracy = 1.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        m.confusion[0, 0] = 1


# ---------------------------------------------------------------------------------------------------------------
# Corpus token scores


WORD = re.compile(r"\w+(?:['\u2019]\w+)*")


def naive_token_scores(predictor, texts, min_count: int) -> dict[str, tuple[float, int]]:
    """One review at a time through ``Predictor.explain``; words and bigrams reassembled with plain loops."""
    target = predictor.labels.index("positive") if "positive" in predictor.labels else len(predictor.labels) - 1
    sums, counts = defaultdict(float), defaultdict(int)
    for text in texts:
        scores = predictor.explain(text, "grad_x_input", target=target).scores
        enc = predictor.encode(text)
        special = enc.special_mask()
        words = []  # (lower-cased word, start, end, score) of the words the model saw
        for match in WORD.finditer(text):
            a, b = match.span()
            pieces = [scores[t] for t in range(len(scores))
                      if not special[t] and enc.offsets[t][1] > enc.offsets[t][0] and a <= enc.offsets[t][1] - 1 < b]
            if pieces:
                words.append((text[a:b].lower(), a, b, float(np.sum(np.asarray(pieces, np.float64)))))
        occ = defaultdict(list)
        for w, _, _, s in words:
            occ[w].append(s)
        for (w1, _, e1, s1), (w2, s2_start, _, s2) in zip(words, words[1:]):
            gap = text[e1:s2_start]
            # consecutive in the text: no skipped (truncated away) word in between, whitespace only
            if gap.isspace() and not WORD.search(gap):
                occ[f"{w1} {w2}"].append(s1 + s2)
        for w, values in occ.items():
            sums[w] += float(np.mean(values))
            counts[w] += 1
    return {w: (sums[w] / counts[w], counts[w]) for w in sums if counts[w] >= min_count}


def short_imdb_reviews(n: int) -> list[str]:
    """The first ``n`` (at most 50) IMDB test reviews of at most 700 characters (the committed sample)."""
    texts = [r["text"] for r in imdb_sample("short50")]
    assert n <= len(texts)
    return texts[:n]


def assert_same_scores(got: CorpusTokens, want: dict[str, tuple[float, int]]) -> None:
    assert set(got.tokens) == set(want)
    scale = max(abs(s) for s, _ in want.values())
    for tok, score_, count in zip(got.tokens, got.scores, got.counts):
        assert count == want[tok][1], tok
        assert score_ == pytest.approx(want[tok][0], abs=2e-4 * scale), tok


def test_token_scores_equal_a_naive_recomputation_on_50_reviews(bundled_predictor):
    texts = short_imdb_reviews(50)
    assert len(texts) == 50
    got = corpus_token_scores(bundled_predictor, texts, min_count=1, batch_size=16)
    assert_same_scores(got, naive_token_scores(bundled_predictor, texts, 1))
    assert got.n_explained == 50 and got.complete and got.positive_label == "positive"
    assert got.is_bigram.any() and not got.is_bigram.all()
    assert all(" " in t for t, b in zip(got.tokens, got.is_bigram) if b)
    kept = corpus_token_scores(bundled_predictor, texts, min_count=3, bigrams=False)
    assert kept.counts.min() >= 3 and not kept.is_bigram.any()
    assert dict(zip(kept.tokens, kept.counts)) == {t: c for t, c in zip(got.tokens, got.counts)
                                                   if c >= 3 and " " not in t}


def test_toward_negative_is_minus_toward_positive(bundled_predictor):
    text = short_imdb_reviews(1)[0]
    pos = bundled_predictor.explain(text, "grad_x_input", target=1).scores
    neg = bundled_predictor.explain(text, "grad_x_input", target=0).scores
    np.testing.assert_allclose(neg, -pos, rtol=1e-4, atol=1e-5)
    tokens = corpus_token_scores(bundled_predictor, short_imdb_reviews(30), min_count=2)
    top_neg = tokens.top(5, "negative")
    assert top_neg and all(s > 0 for _, s, _ in top_neg)
    assert all(tokens.lookup(t)[0] == pytest.approx(-s) for t, s, _ in top_neg)
    top_pos = tokens.top(5, "positive")
    assert [s for _, s, _ in top_pos] == sorted((s for _, s, _ in top_pos), reverse=True)
    assert not {t for t, _, _ in top_pos} & {t for t, _, _ in top_neg}
    assert all(" " in t for t, _, _ in tokens.top(5, kind="bigrams"))
    with pytest.raises(ValueError):
        tokens.top(5, "sideways")


def test_progress_stop_and_skipped_texts(tiny_predictor):
    texts = ["A wonderful film with a great cast."] * 40 + ["", "   "] + ["Dull, boring and far too long."] * 40
    calls = []
    full = corpus_token_scores(tiny_predictor, texts, min_count=1, batch_size=8,
                               progress=lambda d, t: calls.append((d, t)))
    assert full.n_skipped == 2 and full.n_explained == 80 and full.complete
    assert calls[-1] == (82, 82) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert dict(zip(full.tokens, full.counts))["wonderful"] == 40
    n = {"batches": 0}

    def stop_after_two() -> bool:
        n["batches"] += 1
        return n["batches"] > 2

    part = corpus_token_scores(tiny_predictor, texts, min_count=1, batch_size=8, should_stop=stop_after_two)
    assert not part.complete and part.n_explained == 16
    assert not part.scores.flags.writeable
    with pytest.raises(ValueError):
        corpus_token_scores(tiny_predictor, texts, method="attention")


@pytest.mark.parametrize("family", ["bert", "roberta"])
def test_token_scores_for_hf_classifiers(family, tmp_path):
    pytest.importorskip("transformers")
    from model import Predictor
    from tests.fixtures.tiny_hf import make_tiny_hf_dir

    predictor = Predictor.from_pretrained(make_tiny_hf_dir(tmp_path / family, family), device="cpu")
    texts = ["This movie was wonderful, the acting superb.", "A terrible film. Boring, badly acted, too long.",
             "I loved every minute of it; a great cast!", "The worst script, and the ending was awful.",
             "Wonderful photography, a wonderful film."] * 2
    got = corpus_token_scores(predictor, texts, min_count=1, batch_size=4)
    assert "wonderful" in got.tokens and got.n_explained == 10
    assert_same_scores(got, naive_token_scores(predictor, texts, 1))


# ---------------------------------------------------------------------------------------------------------------
# metrics.json and the report


def fake_tokens() -> CorpusTokens:
    tokens = ("great", "<script>alert(1)</script>", "so bad", "awful")
    scores = np.array([1.5, 0.2, -0.8, -1.2])
    return CorpusTokens(tokens, scores, np.array([40, 6, 9, 22]), np.array([False, False, True, False]),
                        ("negative", "positive"), "positive", "grad_x_input", 5, 100, 98, 2, True, 1.0)


def test_metrics_json_schema(tmp_path):
    rows = make_rows(600, 11)
    m = corpus_metrics(rows)
    path = tmp_path / "metrics.json"
    write_metrics_json(path, m, fake_tokens(), top=3)
    d = json.loads(path.read_text())
    assert tuple(d) == METRICS_KEYS + TASK_KEYS["single_label"]
    y, yhat = gold_pairs(rows)
    (tn, fp), (fn, tp) = confusion_matrix(y, yhat, labels=["negative", "positive"])
    assert d["confusion_matrix"] == {"labels": ["negative", "positive"], "matrix": [[tn, fp], [fn, tp]]}
    assert (d["n_scored"], d["n_failed"], d["n_with_gold"]) == (m.n_scored, m.n_failed, len(y))
    assert d["accuracy"] == pytest.approx(accuracy_score(y, yhat)) and d["ece"] == pytest.approx(ece_loop(rows))
    assert d["f1"] == pytest.approx(f1_score(y, yhat, pos_label="positive"))
    assert d["top_tokens"]["positive"] == [{"token": "great", "score": 1.5, "count": 40},
                                           {"token": "<script>alert(1)</script>", "score": 0.2, "count": 6}]
    assert d["top_tokens"]["negative"][0] == {"token": "awful", "score": 1.2, "count": 22}
    assert all(set(e) == {"token", "score", "count"} for side in d["top_tokens"].values() for e in side)


def test_report_is_one_self_contained_escaped_file(tmp_path):
    rows = make_rows(800, 12)
    m = corpus_metrics(rows)
    path = tmp_path / "report.html"
    write_report_html(path, m, fake_tokens(), model_name="<script>alert('model')</script>", date="2025-01-31 12:00",
                      failures=[("<script>x.txt", "unreadable <b>")])
    html = path.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
    low = html.lower()
    assert "http" not in low and "<script" not in low and "src=" not in low and "@import" not in low
    assert "&lt;script&gt;x.txt" in html and "unreadable &lt;b&gt;" in html and f"{m.n_failed:,} input(s)" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;script&gt;alert(&#x27;model&#x27;)" in html
    assert f"{100 * m.accuracy:.1f}%" in html and f"{m.f1:.4f}" in html and f"{m.ece:.4f}" in html
    assert f"{m.n_scored:,}" in html and "2025-01-31 12:00" in html
    tn, fp, fn, tp = m.confusion.ravel()
    assert all(f">{v:,}<" in html for v in (tn, fp, fn, tp))
    assert html.count("<svg") == 5  # confusion, reliability, histogram, length and truncation, tokens
    no_gold = render_report_html(corpus_metrics(make_rows(50, 1, gold_share=0)), None, model_name="m", date="d")
    assert "No gold labels" in no_gold and "not computed" in no_gold and "<script" not in no_gold


def test_report_histogram_ticks_captions_and_a_tiny_corpus_note():
    """Issue 46: the count axis labels whole counts where they are (0, 2, .., 10, not 2.5 printed as "2"); the length
    chart's caption says long reviews are read in windows; a corpus too small for the token ranking says so."""
    import dataclasses
    import re

    from model.report.charts import histogram_svg

    svg = histogram_svg(np.linspace(0, 1, 11), [("all", np.array([10, 3, 0, 1, 0, 0, 0, 0, 2, 9]), "#000")], "p")
    ticks = re.findall(r'<g id="ytick_\d+">.*?<text[^>]*>([^<]+)</text>', svg, re.S)  # matplotlib's y tick labels
    assert ticks == ["0", "2", "4", "6", "8", "10"], ticks
    for top in (1, 2, 5, 25, 250):  # whole counts only, up to the tallest bar
        svg = histogram_svg(np.linspace(0, 1, 3), [("all", np.array([top, 0]), "#000")], "p")
        ticks = re.findall(r'<g id="ytick_\d+">.*?<text[^>]*>([^<]+)</text>', svg, re.S)
        assert all(t.replace(",", "").isdigit() for t in ticks) and int(ticks[-1].replace(",", "")) >= top, ticks
    m = corpus_metrics(make_rows(300, 3))
    html = render_report_html(m, fake_tokens(), model_name="m", date="d")
    assert "read whole, in windows" in html and "head+tail policy" not in html and "Too few reviews" not in html
    tiny = dataclasses.replace(fake_tokens(), n_texts=8, n_explained=8, n_skipped=0)
    html = render_report_html(m, tiny, model_name="m", date="d")
    assert "Too few reviews for this ranking: a token must appear in at least 5 of the 8 reviews" in html


# ---------------------------------------------------------------------------------------------------------------
# The command line


@pytest.fixture
def gold_folder(tmp_path) -> Path:
    """pos/ and neg/ folders of real IMDB test reviews (gold labels from the folder names) and one unreadable file."""
    root = tmp_path / "reviews"
    for label in ("pos", "neg"):
        (root / label).mkdir(parents=True)
    for i, d in enumerate(imdb_sample("first80")):
        label = "pos" if d["label"] in (1, "pos", "positive") else "neg"
        (root / label / f"{i}.txt").write_text(d["text"], encoding="utf-8")
    (root / "neg" / "empty.txt").write_text("")
    return root


def run_cli(argv, capsys):
    code = score.main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_cli_report_and_metrics_from_the_same_rows(gold_folder, tmp_path, capsys):
    out, rep, met = tmp_path / "rows.csv", tmp_path / "report.html", tmp_path / "metrics.json"
    code, err = run_cli([gold_folder, "--model", BUNDLED_MODEL, "--out", out, "--report", rep, "--metrics", met,
                         "--no-progress", "--min-count", "3", "--top-tokens", "7"], capsys)
    assert code == 1, err  # the empty file failed
    rows = read_results(out)
    d = json.loads(met.read_text())
    y, yhat = gold_pairs(rows)
    assert (d["n_scored"], d["n_failed"], d["n_with_gold"]) == (80, 1, 80)
    assert d["accuracy"] == pytest.approx(accuracy_score(y, yhat), abs=1e-12)
    assert d["f1"] == pytest.approx(f1_score(y, yhat, pos_label="positive"), abs=1e-12)
    assert d["confusion_matrix"]["matrix"] == confusion_matrix(y, yhat, labels=["negative", "positive"]).tolist()
    assert d["ece"] == pytest.approx(ece_loop(rows), abs=1e-6)  # the CSV rounds nothing: same floats
    assert 0 < len(d["top_tokens"]["positive"]) <= 7 and all(e["count"] >= 3 for e in d["top_tokens"]["negative"])
    html = rep.read_text(encoding="utf-8")
    assert f"{100 * d['accuracy']:.1f}%" in html and "http" not in html and "bundled model" in html
    assert "wrote the report" in err and "wrote metrics" in err


def test_cli_without_gold_or_token_scores(tmp_path, capsys):
    review = tmp_path / "review.txt"
    review.write_text(short_imdb_reviews(1)[0], encoding="utf-8")
    met, rep = tmp_path / "m.json", tmp_path / "r.html"
    code, err = run_cli([review, "--model", BUNDLED_MODEL, "--metrics", met, "--report", rep, "--no-token-scores",
                         "--no-progress", "--out", tmp_path / "rows.jsonl"], capsys)
    assert code == 0, err
    d = json.loads(met.read_text())
    assert (d["n_scored"], d["n_failed"], d["n_with_gold"]) == (1, 0, 0)
    assert all(d[k] is None for k in ("accuracy", "f1", "confusion_matrix", "ece", "top_tokens"))
    assert "No gold labels" in rep.read_text(encoding="utf-8")


@pytest.mark.parametrize("flag", ["--report", "--metrics"])
def test_cli_bad_report_paths_exit_2_before_scoring(flag, gold_folder, tmp_path, capsys, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("scored despite a bad path")

    monkeypatch.setattr(score, "score_records", never)
    for bad in (tmp_path / "missing" / "x.out", tmp_path, tmp_path / "same.csv"):
        code, err = run_cli([gold_folder, "--model", BUNDLED_MODEL, "--out", tmp_path / "same.csv", flag, bad,
                             "--no-progress"], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and flag in err, err
    assert not (tmp_path / "same.csv").exists()


def test_cli_ctrl_c_writes_outputs_from_the_rows_so_far(gold_folder, tmp_path, capsys, monkeypatch):
    real = score.score_records

    def interrupted(*args, **kwargs):
        kwargs["chunk"] = 10
        gen = real(*args, **kwargs)
        yield next(gen)
        raise KeyboardInterrupt

    monkeypatch.setattr(score, "score_records", interrupted)
    out, met = tmp_path / "rows.csv", tmp_path / "metrics.json"
    code, err = run_cli([gold_folder, "--model", BUNDLED_MODEL, "--out", out, "--metrics", met, "--no-progress"],
                        capsys)
    assert code == 130 and "interrupted" in err
    d = json.loads(met.read_text())
    assert d["n_scored"] + d["n_failed"] == len(read_results(out)) == 10 and d["top_tokens"] is None


@pytest.mark.slow
def test_cli_ray_engine_gives_the_same_metrics(gold_folder, tmp_path, capsys):
    pytest.importorskip("ray.data")
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        common = [gold_folder, "--model", BUNDLED_MODEL, "--no-progress", "--min-count", "3", "--precision", "fp32"]
        code_local, err = run_cli([*common, "--out", tmp_path / "l.csv", "--metrics", tmp_path / "l.json"], capsys)
        code_ray, err = run_cli([*common, "--out", tmp_path / "r.csv", "--metrics", tmp_path / "r.json",
                                 "--report", tmp_path / "r.html", "--engine", "ray", "--num-workers", "2"], capsys)
    finally:
        ray.shutdown()
    assert code_local == code_ray == 1, err
    local, remote = json.loads((tmp_path / "l.json").read_text()), json.loads((tmp_path / "r.json").read_text())
    for key in ("n_scored", "n_failed", "n_with_gold", "accuracy", "f1", "confusion_matrix"):
        assert local[key] == remote[key], key
    assert remote["ece"] == pytest.approx(local["ece"], abs=1e-5)
    assert local["precision"] == remote["precision"] == "fp32"  # the actors ran what was asked
    assert [e["token"] for e in remote["top_tokens"]["positive"]] == [e["token"] for e in local["top_tokens"]["positive"]]
    assert (tmp_path / "r.html").is_file()


def test_cli_ctrl_c_in_the_token_pass_keeps_the_reviews_explained(gold_folder, tmp_path, capsys, monkeypatch):
    import os
    import signal

    from model.scorer import report as cli_report

    real = cli_report.corpus_token_scores

    def interrupted_after_one_batch(predictor, texts, **kwargs):
        progress = kwargs["progress"]

        def progress_then_ctrl_c(done, total):
            progress(done, total)
            os.kill(os.getpid(), signal.SIGINT)  # the real signal: the handler asks the pass to stop

        return real(predictor, texts, **{**kwargs, "batch_size": 8, "progress": progress_then_ctrl_c})

    monkeypatch.setattr(cli_report, "corpus_token_scores", interrupted_after_one_batch)
    before = signal.getsignal(signal.SIGINT)  # Python's default, or SIG_IGN when started in the background
    met, rep = tmp_path / "metrics.json", tmp_path / "report.html"
    code, err = run_cli([gold_folder, "--model", BUNDLED_MODEL, "--out", tmp_path / "rows.csv", "--metrics", met,
                         "--report", rep, "--min-count", "1", "--no-progress"], capsys)
    assert code == 130 and "token scores interrupted after 8 of 80 reviews" in err, err
    d = json.loads(met.read_text())
    assert d["n_scored"] == 80 and d["top_tokens"]["positive"]
    assert "Stopped early: over the first 8 reviews" in rep.read_text(encoding="utf-8")
    assert signal.getsignal(signal.SIGINT) is before  # the handler the run found is put back


def test_auto_min_count():
    from model.scorer.report import auto_min_count

    assert (auto_min_count(10), auto_min_count(2500), auto_min_count(25_000)) == (5, 5, 50)


def test_an_undefined_f1_is_named_and_the_report_shows_no_number():
    """Issue 56: the F1 of the positive class among correctly predicted negatives is 0/0 (scikit-learn: 0.0 with an
    UndefinedMetricWarning); undefined_f1 names it, and the report's card reads "n/a" instead of "0.0000"."""
    import warnings

    from sklearn.exceptions import UndefinedMetricWarning

    from model.corpus.metrics import undefined_f1

    rows = [r for r in make_rows(400, 6) if r.ok and r.gold == r.label == "negative"]
    m = corpus_metrics(rows)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert m.f1 == f1_score(*gold_pairs(rows), pos_label="positive") == 0.0
    assert any(issubclass(w.category, UndefinedMetricWarning) for w in caught)
    assert "positive class is undefined" in undefined_f1(m) and m.accuracy == 1.0
    html = render_report_html(m, None, model_name="m", date="d")
    assert "<b>n/a</b><span>F1 (positive class)</span>" in html
    assert undefined_f1(corpus_metrics(make_rows(400, 6))) == ""  # both classes present: defined
