"""The task types as types (issue 41, item 1): each :class:`model.tasks.types.TaskType`'s read-out, labels, value,
columns and explanation target against the formulas written out here; the ids parsed once; every dispatch table
covers every registered type; a new task kind is one class; the one input-spec check of a second text."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from model.batch.rows import BINARY_LABELS, ResultRow, RowSchema, row_from_mapping
from model.records.prediction import PairNotSupported
from model.tasks.task import TASKS, Task, predicted_labels, probabilities_of, task_of
from model.tasks.types import (
    MULTI_LABEL,
    REGRESSION,
    SINGLE_LABEL,
    TASK_TYPES,
    MultiLabel,
    Regression,
    SingleLabel,
    TaskType,
    task_type,
    task_type_of_columns,
)
from model.text.inputs import InputSpec

LOGITS = np.array([[2.0, -1.0, 0.5], [-30.0, 40.0, 0.0]])
LABELS = ("a", "b", "c")


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def test_the_ids_parse_once_into_one_type_each():
    assert tuple(TASK_TYPES) == TASKS == (SINGLE_LABEL, MULTI_LABEL, REGRESSION)
    for kind, t in TASK_TYPES.items():
        assert t.id == kind and task_type(kind) is t and task_type(t) is t and Task(kind).type is t
        assert Task(t).kind == kind  # a type given to Task is stored as its serialisation id
    assert [type(t) for t in TASK_TYPES.values()] == [SingleLabel, MultiLabel, Regression]
    with pytest.raises(ValueError, match="unknown task 'ranking'; expected one of single_label, multi_label"):
        task_type("ranking")
    with pytest.raises(ValueError, match="unknown task"):
        Task("ranking")


def test_task_of_is_the_one_way_to_ask_an_object_for_its_task():
    assert task_of(SimpleNamespace(task=Task(REGRESSION, 0.3))) == Task(REGRESSION, 0.3)
    assert task_of(object()) == Task() and task_of(None).type is task_type(SINGLE_LABEL)


def test_each_type_reads_logits_as_its_formula():
    np.testing.assert_allclose(SingleLabel().scores(LOGITS), _softmax(LOGITS), rtol=1e-6)
    np.testing.assert_allclose(MultiLabel().scores(LOGITS), _sigmoid(LOGITS), rtol=1e-6, atol=1e-30)
    assert Regression().scores(LOGITS).shape == (2, 0)
    for t in TASK_TYPES.values():
        assert t.scores(LOGITS).dtype == np.float32
        np.testing.assert_array_equal(probabilities_of(LOGITS, t.id), t.scores(LOGITS))
        assert t.score_width(3) == t.scores(LOGITS).shape[-1]
    assert SingleLabel().scores(np.zeros((2, 0))).shape == (2, 0)  # no head: nothing to normalise


def test_the_torch_read_out_equals_the_numpy_one():
    torch = pytest.importorskip("torch")
    from model.tasks.readout import outputs, probabilities

    z = torch.tensor(LOGITS, dtype=torch.float32)
    for t in TASK_TYPES.values():
        np.testing.assert_allclose(probabilities(z, t.id).numpy(), t.scores(LOGITS), rtol=1e-5, atol=1e-7)
        want = t.scores(LOGITS) if t.reads_probabilities else LOGITS
        np.testing.assert_allclose(outputs(z, t).numpy(), want, rtol=1e-5, atol=1e-7)
        np.testing.assert_array_equal(t.measured_values(LOGITS[0], t.scores(LOGITS)[0]), want[0])


def test_scores_become_labels_and_values():
    p = np.array([0.2, 0.5, 0.3])
    assert SingleLabel().labels_of(p, LABELS, 0.5) == ("b",)
    assert MultiLabel().labels_of(p, LABELS, 0.5) == ("b",)  # at or above the threshold
    assert MultiLabel().labels_of(p, LABELS, 0.25) == ("b", "c")  # in the model's label order
    assert MultiLabel().labels_of(p, LABELS, 0.9) == ()
    assert Regression().labels_of(np.zeros(0), ("score",), 0.5) == ()
    for t in TASK_TYPES.values():
        assert t.labels_of(np.zeros(0), (), 0.5) == ()  # no head: no labels
        assert predicted_labels(p, LABELS, t.id, 0.25) == t.labels_of(p, LABELS, 0.25)
        assert Task(t.id, 0.25).labels_of(p, LABELS) == t.labels_of(p, LABELS, 0.25)
    assert Regression().value_of(np.array([3.5])) == 3.5 and Regression().value_of(np.zeros(0)) is None
    assert SingleLabel().value_of(np.array([3.5])) is None and MultiLabel().value_of(np.array([3.5])) is None


def test_right_or_wrong_as_each_task_reads_it():
    assert SingleLabel().correct("a", "a") and not SingleLabel().correct("a", "b")
    assert MultiLabel().correct("b;a", "a;b") and MultiLabel().correct("", "") and not MultiLabel().correct("a", "")
    assert Regression().correct("", "3.5") is None


def test_the_head_outputs_a_task_needs():
    Regression().check_outputs(1)
    with pytest.raises(ValueError, match="regression reads one output, and this model has 3"):
        Regression().check_outputs(3)
    SingleLabel().check_outputs(3)
    MultiLabel().check_outputs(1)


def test_the_explained_target_of_each_type():
    contributions = np.array([[1.0, 3.0, 5.0], [2.0, 0.0, -2.0]])
    np.testing.assert_allclose(SingleLabel().class_scores(contributions, 0), [1.0 - 4.0, 2.0 + 1.0])
    for t in (MultiLabel(), Regression()):
        np.testing.assert_allclose(t.class_scores(contributions, 2), contributions[:, 2])
    np.testing.assert_allclose(SingleLabel().class_scores(contributions[:, :1], 0), contributions[:, 0])
    assert [t.explains_log_odds for t in TASK_TYPES.values()] == [True, False, False]
    torch = pytest.importorskip("torch")
    from model.explain.gradients import class_log_odds, target_score

    z = torch.tensor(LOGITS)
    torch.testing.assert_close(target_score(z, 1, SINGLE_LABEL), class_log_odds(z, 1))
    torch.testing.assert_close(target_score(z, 1, MultiLabel()), z[:, 1])


def test_the_status_line_and_the_big_label_of_each_type():
    sl = SimpleNamespace(label="b", labels=LABELS, probabilities=np.array([0.2, 0.5, 0.3]))
    assert SingleLabel().verdict(sl) == "b (50.0 %)" and SingleLabel().headline(sl) == "b"
    assert SingleLabel().headline_label(sl) == "b"
    ml = SimpleNamespace(labels=LABELS, probabilities=np.array([0.6, 0.9, 0.7]), threshold=0.5,
                         predicted_labels=("a", "b", "c"))
    assert MultiLabel().verdict(ml) == MultiLabel().headline(ml) == "b, c, a"
    assert MultiLabel().headline(ml, most=2) == "b, c +1 more" and MultiLabel().headline_label(ml) is None
    none = SimpleNamespace(labels=LABELS, probabilities=np.zeros(3), threshold=0.5, predicted_labels=())
    assert MultiLabel().headline(none) == "no label \u2265 0.50"
    reg = SimpleNamespace(labels=("similarity",), value=3.8249)
    assert Regression().verdict(reg) == "value 3.82" and Regression().headline(reg) == "similarity = 3.82"
    assert Regression().headline(SimpleNamespace(labels=("LABEL_0",), value=1.0)) == "value = 1"
    assert Regression().headline_label(reg) is None


def _row(kind: str) -> ResultRow:
    t = task_type(kind)
    probs = (0.2, 0.5, 0.3) if t.reads_probabilities else ()
    return ResultRow("s", "x", "b", probs, 4, False, "", None, "ok", value=None if probs else 2.5,
                     labels=LABELS if probs else (), task=kind)


@pytest.mark.parametrize("kind, own", [(SINGLE_LABEL, ["confidence", "p_a", "p_b", "p_c"]),
                                       (MULTI_LABEL, ["p_a", "p_b", "p_c"]), (REGRESSION, ["value"])])
def test_the_exported_columns_of_each_type_and_back(kind, own):
    schema = RowSchema(LABELS, kind)
    assert list(schema.columns) == ["source", "text", "label", *own, "num_tokens", "truncated", "gold", "correct",
                                    "status", "num_windows", "model", "precision"]
    values = schema.values(_row(kind))
    assert list(values) == list(schema.columns)
    back = row_from_mapping(values)
    assert back.task == kind and task_type_of_columns(schema.columns, LABELS, BINARY_LABELS).id == kind
    assert back.probabilities == _row(kind).probabilities and back.value == _row(kind).value
    if kind == SINGLE_LABEL:
        assert values["confidence"] == 0.5


def test_an_export_from_before_tasks_reads_as_the_bundled_single_label_model():
    old = {"source": "s", "text": "x", "label": "positive", "p_positive": "0.75", "status": "ok"}
    row = row_from_mapping(old)
    assert row.task == SINGLE_LABEL and row.labels == BINARY_LABELS and row.probabilities == (0.25, 0.75)


def _tables() -> dict[str, object]:
    """Every table of behaviour kept beside its consumer, keyed by task type class or id."""
    from model.corpus.metrics import TASK_METRICS
    from model.report.report import TASK_CARDS, TASK_KEYS
    from model.counterfactuals.scoring import VERDICTS

    tables: dict[str, object] = {"corpus metrics": TASK_METRICS, "report cards": TASK_CARDS, "metrics keys": TASK_KEYS,
                                 "counterfactual flips": VERDICTS}
    if pytest.importorskip("PySide6"):
        from desktop_app.panels.corpus.panel import GOLD_NUMBERS
        from desktop_app.views.faithfulness_table import MEASURED
        from desktop_app.window.task_menu import TASK_MENU_TITLES

        tables.update({"corpus numbers": GOLD_NUMBERS, "faithfulness": MEASURED, "task menu": TASK_MENU_TITLES})
    return tables


def test_every_dispatch_table_covers_every_registered_type():
    for name, table in _tables().items():
        for t in TASK_TYPES.values():
            assert (type(t) in table) or (t.id in table), f"{name}: no entry for {t.id}"
            if type(t) in table:
                assert t.pick(table) is table[type(t)]
    with pytest.raises(LookupError, match="no entry for the task 'regression'"):
        Regression().pick({SingleLabel: 1})


@pytest.fixture
def new_kind():
    """A fourth task kind defined as one class (registered while the test runs, then removed)."""
    from model.tasks import types

    class Ordinal(TaskType):
        """Ordered classes read as a softmax; the expected class index is the value."""

        id = "test_ordinal"
        title = "Ordinal (expected class)"
        menu_title = "&Ordinal"
        problem_type = "test_ordinal_regression"
        exclusive = True
        measured = "p(class)"
        metric_keys = ("macro_f1",)
        corpus_plots = ("confusion", "histogram")

        def scores(self, logits):
            return SingleLabel().scores(logits)

        def torch_scores(self, logits):
            return logits.softmax(-1)

        def labels_of(self, probabilities, labels, threshold):
            return SingleLabel().labels_of(probabilities, labels, threshold)

        def value_of(self, logits):
            return float(SingleLabel().scores(logits) @ np.arange(len(logits))) if len(logits) else None

        def verdict(self, pred):
            return f"class {pred.value:.1f}"

    yield Ordinal()
    del types._REGISTRY["test_ordinal"]


def test_a_new_task_kind_is_one_class(new_kind):
    assert task_type("test_ordinal") is TASK_TYPES["test_ordinal"] == new_kind
    task = Task("test_ordinal", source="user")
    assert task.type == new_kind and task.labels_of(np.array([0.1, 0.7, 0.2]), LABELS) == ("b",)
    assert new_kind.value_of(np.array([0.0, 0.0, 0.0])) == pytest.approx(1.0)
    assert RowSchema(LABELS, "test_ordinal").columns[3:6] == ("p_a", "p_b", "p_c")
    with pytest.raises(ValueError, match="registered twice"):
        type("Again", (TaskType,), {"id": "test_ordinal"})


def test_the_input_spec_is_the_one_check_of_a_second_text():
    single, pairs = InputSpec(False, "the model in /m"), InputSpec(True)
    assert single.refusal(None) is None and pairs.refusal("b") is None
    assert single.refusal("b") == single.refusal("column") == "the model in /m reads single texts, not sentence pairs"
    with pytest.raises(PairNotSupported, match="^the model in /m reads single texts, not sentence pairs: it has no "):
        single.check_pair("b")
    assert single.check_pair(None) is None and pairs.check_pair("b") == "b"
    with pytest.raises(ValueError, match="second text: the text is empty"):
        pairs.check_pair("  ")
    assert InputSpec.of(SimpleNamespace(reads_pairs=True, model_dir="/x")) == InputSpec(True, "the model in /x")
    assert InputSpec.of(object()) == InputSpec(False, "this model")
    assert InputSpec.of(None, "this model").refusal("col") is not None


def test_a_shared_base_without_an_id_is_not_a_kind():
    class Softmaxed(TaskType):
        """A base of kinds that read a softmax."""

    assert Softmaxed not in {type(t) for t in TASK_TYPES.values()} and len(TASK_TYPES) == len(TASKS)
