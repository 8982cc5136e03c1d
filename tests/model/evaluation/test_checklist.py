"""CheckList-style behavioural test set (model.datasets.behaviour, reported by model.evaluation.checklist)."""

from __future__ import annotations

from model.datasets.behaviour import TARGET_CAPABILITIES, build_cases, run_checklist


def test_cases_are_deterministic_and_labelled_by_capability():
    cases = build_cases()
    assert cases == build_cases()
    caps = {c.capability for c in cases}
    assert caps == {"plain_positive", "plain_negative", *TARGET_CAPABILITIES}
    by_cap = {cap: [c for c in cases if c.capability == cap] for cap in caps}
    assert all(c.expected == 1 for c in by_cap["plain_positive"] + by_cap["negated_negative"])
    assert all(c.expected == 0 for c in by_cap["plain_negative"] + by_cap["negated_positive"])
    assert {c.expected for c in by_cap["contrast"]} == {0, 1}
    assert "This movie was not good." in {c.text for c in cases}
    assert "I expected it to be boring, but it was a delight." not in {c.text for c in cases}  # the issue's own example stays unseen
    assert all(len(v) >= 90 for v in by_cap.values())


def test_bundled_model_passes_the_plain_statements(bundled_predictor):
    result = run_checklist(bundled_predictor)
    assert result["plain_positive"]["pass_rate"] >= 0.95
    assert result["plain_negative"]["pass_rate"] >= 0.95
    for cap in TARGET_CAPABILITIES:
        assert 0.0 <= result[cap]["pass_rate"] <= 1.0 and result[cap]["n"] > 0


def test_bundled_model_on_the_issues_examples(bundled_predictor):
    """The issue's three user-reported sentences are read right by the bundled model."""
    assert bundled_predictor.predict("I expected it to be boring, but it was a delight.").label == "positive"
    assert bundled_predictor.predict("This movie was not good.").label == "negative"
    assert bundled_predictor.predict("This movie was not bad at all.").label == "positive"


def test_bundled_model_meets_the_behavioural_bars(bundled_predictor):
    """The issue's aim, recorded in metrics.json: >= 80% on each negation and contrast capability."""
    result = run_checklist(bundled_predictor)
    assert all(result[cap]["pass_rate"] >= 0.8 for cap in TARGET_CAPABILITIES), result


def test_dev_set_shares_no_sentence_or_adjective_with_the_reported_set():
    from model.datasets import behaviour as checklist

    report, dev = build_cases(), build_cases(dev=True)
    assert not {c.text for c in report} & {c.text for c in dev}
    assert not set(checklist.POSITIVE + checklist.NEGATIVE) & set(checklist.DEV_POSITIVE + checklist.DEV_NEGATIVE)
    assert {c.capability for c in dev} == {c.capability for c in report}
