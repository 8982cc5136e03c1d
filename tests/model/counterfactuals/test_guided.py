"""The model-guided generators, the scoring and the smallest-flip search (issue 43), on real models: the bundled one
(skips without its weights) and tiny random ones of each task type."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from model.counterfactuals import GENERATORS, SearchCancelled, Settings, counterfactual_metrics, generate, smallest_flip
from model.counterfactuals.base import Source, word_spans
from model.counterfactuals.hotflip import vocabulary
from model.counterfactuals.scoring import VERDICTS, bernoulli_js, js_divergence
from model.records.prediction import Score
from model.tasks.types import MultiLabel, Regression, SingleLabel

POSITIVE = ("This movie was great. I didn't like the ending, but the acting is very good and the story is "
            "wonderful.")
NEGATIVE = "A boring, dull film. The plot is terrible and I hated every minute of it."


def _words(text: str) -> Counter:
    return Counter(text[s:e] for s, e in word_spans(text))


def _assert_fresh(predictor, edits, threshold=0.0):
    """Each edit's reported verdicts equal fresh predictions of the source and of the edited input."""
    rule = predictor.task.type.pick(VERDICTS)
    for e in edits:
        before = predictor.predict(e.text, text_pair=e.text_pair)
        after = predictor.predict(e.edited_text, text_pair=e.edited_pair)
        assert e.error is None and e.label == before.label and e.edited_label == after.label
        np.testing.assert_allclose(e.probabilities, before.probabilities, atol=2e-5)
        np.testing.assert_allclose(e.edited_probabilities, after.probabilities, atol=2e-5)
        if after.value is not None:
            assert e.edited_value == pytest.approx(after.value, abs=2e-5)
            assert e.flipped == ((before.value >= threshold) != (after.value >= threshold))
        else:
            assert e.flipped == (set(before.predicted_labels) != set(after.predicted_labels))
        i = rule.measured(Score(e.label, before.probabilities, False, 1, value=before.value))
        new = after.value if after.value is not None else after.probabilities[i]
        old = before.value if before.value is not None else before.probabilities[i]
        assert e.delta == pytest.approx(new - old, abs=3e-5)


def test_every_generator_on_the_bundled_model_reports_what_a_fresh_predict_says(bundled_predictor):
    edits = generate(bundled_predictor, [(POSITIVE, None), (NEGATIVE, None)], list(GENERATORS))
    assert {e.generator for e in edits} == set(GENERATORS)
    _assert_fresh(bundled_predictor, edits)
    assert any(e.flipped for e in edits)


def test_ablation_flip_removes_only_and_finds_a_locally_smallest_flip(bundled_predictor):
    (edit,) = GENERATORS["ablation_flip"].generate(_source(bundled_predictor, POSITIVE))
    assert all(c.new == "" for c in edit.changes)
    assert not _words(edit.edited) - _words(POSITIVE)  # never adds a word
    assert sum(_words(POSITIVE).values()) - sum(_words(edit.edited).values()) == edit.size
    assert edit.flipped and edit.size >= 1
    for keep in range(len(edit.changes)):  # putting any one removed word back undoes the flip
        back = tuple(c for i, c in enumerate(edit.changes) if i != keep)
        if edit.size > 1:
            from model.records.counterfactual import apply_changes

            assert bundled_predictor.predict(apply_changes(POSITIVE, back)).label == edit.label


def test_ablation_flip_never_adds_a_word_on_the_committed_imdb_sample(bundled_predictor):
    from imdb_data import imdb_sample

    texts = [r["text"] for r in imdb_sample("short50")[:6]]
    edits = generate(bundled_predictor, [(t, None) for t in texts], ["ablation_flip"],
                     Settings(max_removals=6, method="grad_x_input"))
    assert len(edits) == len(texts)
    for e in edits:
        assert all(c.new == "" for c in e.changes) and not _words(e.edited) - _words(e.text)


def test_hotflip_substitutes_one_or_two_whole_words_from_the_vocabulary(bundled_predictor):
    ids, words, table = vocabulary(bundled_predictor)
    assert len(ids) == len(words) == table.shape[0] > 1000 and all(w.isalpha() for w in words)
    vocab = {w.lower() for w in words}
    for text in (POSITIVE, NEGATIVE):
        (edit,) = GENERATORS["hotflip"].generate(_source(bundled_predictor, text))
        assert 1 <= edit.size == len(edit.changes) <= 2
        for c in edit.changes:
            assert (c.start, c.end) in word_spans(text) and c.new.lower() in vocab and c.new != text[c.start:c.end]
        assert len(word_spans(edit.edited)) == len(word_spans(text))  # nothing else changed


def _source(predictor, text, pair=None, **settings):
    from model.counterfactuals.scoring import score_inputs

    (score,) = score_inputs(predictor, [text], [pair])
    return Source(text, pair, Settings(**settings).checked(), predictor, predictor.options(), score)


def test_smallest_flip_finds_a_flip_reports_progress_and_cancels(bundled_predictor):
    steps = []
    result = smallest_flip(bundled_predictor, POSITIVE, progress=lambda k, n, what: steps.append((k, n, what)))
    assert result.best is not None and result.best.flipped and result.spent > 0
    assert result.best.size == min(e.size for e in result.tried if e.flipped)
    assert steps and steps[0] == (0, 3, "one-token HotFlip")
    with pytest.raises(SearchCancelled):
        smallest_flip(bundled_predictor, POSITIVE, should_stop=lambda: True)
    small = smallest_flip(bundled_predictor, POSITIVE, budget=5)
    assert not small.complete and small.spent <= 5 + 2 + Settings().candidates
    with pytest.raises(ValueError, match="budget"):
        smallest_flip(bundled_predictor, POSITIVE, budget=0)


def test_multi_label_regression_and_pairs_on_tiny_models(predictor_for):
    multi = predictor_for(("joy", "anger", "fear"), task="multi_label")
    edits = generate(multi, [(POSITIVE, None), (NEGATIVE, None)], list(GENERATORS), Settings(max_removals=4))
    assert {e.generator for e in edits} == set(GENERATORS)
    _assert_fresh(multi, edits)
    reg = predictor_for(("score",), task="regression")
    value = reg.predict(POSITIVE).value
    edits = generate(reg, [(POSITIVE, None)], ["negation", "ablation_flip", "hotflip"],
                     Settings(threshold=value + 1e-4, max_removals=4))
    _assert_fresh(reg, edits, threshold=value + 1e-4)
    assert all(e.jsd is None and e.value is not None for e in edits)
    pairs = predictor_for(("entailment", "contradiction"), pairs=True)
    edits = generate(pairs, [("The film is good.", "It is great and I loved it.")], ["word_replacer", "hotflip"],
                     Settings(side="second"))
    assert edits and all(e.edited_text == "The film is good." and e.edited_pair != e.text_pair for e in edits)
    _assert_fresh(pairs, edits)


def test_flip_rules_by_task_type():
    def s(label="", p=(), value=None):
        return Score(label, np.asarray(p, np.float32), False, 3, value=value)

    single, multi, reg = VERDICTS[SingleLabel], VERDICTS[MultiLabel], VERDICTS[Regression]
    assert single.flipped(s("a", (0.6, 0.4)), s("b", (0.4, 0.6)), 0) and not single.flipped(s("a"), s("a"), 0)
    assert multi.flipped(s("a;b"), s("a"), 0) and not multi.flipped(s("b;a"), s("a;b"), 0)
    assert multi.flipped(s(""), s("a"), 0)
    assert reg.flipped(s(value=0.2), s(value=-0.1), 0.0) and not reg.flipped(s(value=0.2), s(value=0.9), 0.0)
    assert reg.flipped(s(value=0.2), s(value=0.9), 0.5)


def test_js_divergence_matches_scipy():
    scipy = pytest.importorskip("scipy.spatial.distance")
    rng = np.random.default_rng(0)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
        assert js_divergence(p, q) == pytest.approx(scipy.jensenshannon(p, q, base=2) ** 2, abs=1e-9)
    assert js_divergence([1, 0], [0, 1]) == pytest.approx(1.0) and js_divergence([0.3, 0.7], [0.3, 0.7]) == 0
    assert bernoulli_js([0.9, 0.1], [0.9, 0.1]) == 0
    with pytest.raises(ValueError, match="shapes"):
        js_divergence([1, 0], [1, 0, 0])


def test_metrics_count_flips_by_generator_and_class(bundled_predictor):
    edits = generate(bundled_predictor, [(POSITIVE, None), (NEGATIVE, None)], ["negation", "word_replacer"])
    m = counterfactual_metrics(edits)
    for name in ("negation", "word_replacer"):
        mine = [e for e in edits if e.generator == name]
        assert m[name]["n"] == len(mine)
        assert m[name]["flip_rate"] == pytest.approx(np.mean([e.flipped for e in mine]))
        assert m[name]["mean_abs_delta"] == pytest.approx(np.mean([abs(e.delta) for e in mine]))
        assert m[name]["mean_jsd"] == pytest.approx(np.mean([e.jsd for e in mine]))
        assert sum(v["n"] for v in m[name]["by_class"].values()) == len(mine)
