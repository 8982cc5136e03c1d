"""Save screenshots of Attention Explorer into ``docs/screenshots/``.

Run under a virtual X server::

    xvfb-run -a python build_scripts/screenshots.py [--model DIR] [--sample FILE] [--out DIR]

Uses the trained model in ``resources/model`` when present; otherwise a
randomly initialised 512-token model is written to a temporary folder (and
the screenshots say so in the window title). The review is a real IMDB test
review from ``resources/samples``.

Writes: window.png (the whole window at its default 1400 x 860), token_view.png, prediction.png,
heatmap.png, links.png, model_view.png, pe.png, neuron.png, steps.png, explanations.png and batch.png
(the batch table after scoring ``--batch-n`` IMDB test reviews laid out as
aclImdb ``pos/``/``neg/`` folders; taken from ``--imdb`` when that file exists,
else from the bundled samples). ``--only neuron.png,steps.png`` writes just those files. The attention steps' lessons
(issue 36): steps_step0.png (attention without weights), steps_causal.png (the causal what-if switched on),
steps_heads.png (the heads joined by W^O) and heatmap_causal.png. The workspaces (issue 54): workspace_read.png,
workspace_learn.png, workspace_inside.png, workspace_compare.png and workspace_corpus.png, the whole window at
1400 x 860 in each. Issue 53: components.png, the whole window at 1400 x 860 in Inside with the Components dock in
front, its largest FFN clicked (its top neurons listed); contribution_graph.png, the Contribution graph dock with its
strongest head path clicked; block.png, the window in Learn with the Block dock raised; patching.png (taken last), a
sample pinned and its last sentence negated current, the Patching dock in front (``--patching-site``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def wait_until(app, cond, timeout_s: float = 120.0) -> bool:
    """Process events until ``cond()`` is true or ``timeout_s`` seconds pass."""
    t0 = time.monotonic()
    while not cond():
        app.processEvents()
        time.sleep(0.01)
        if time.monotonic() - t0 > timeout_s:
            return False
    return True


def write_review_folder(imdb: Path, n: int, root: Path) -> Path:
    """Write ``n`` real reviews as ``root/{pos,neg}/<id>_<rating>.txt`` (the aclImdb layout) and return root.

    Reviews come from ``imdb`` (IMDB ``test.jsonl.gz``) when it exists, else from ``resources/samples``.
    """
    from model.core.paths import samples_dir
    from model.files.textio import read_labelled

    rows = []
    if imdb.is_file():
        texts, labels = read_labelled(imdb)
        rows = [(t, "pos" if y == 1 else "neg", i) for i, (t, y) in enumerate(zip(texts, labels))]
        rows = rows[:: max(1, len(rows) // n)][:n]
    else:
        for i, path in enumerate(sorted(samples_dir().glob("*.txt"))):
            rows.append((path.read_text(encoding="utf-8"), path.name.split("_")[0], i))
    for text, label, i in rows:
        (root / label).mkdir(parents=True, exist_ok=True)
        (root / label / f"{i}_{8 if label == 'pos' else 2}.txt").write_text(text, encoding="utf-8")
    return root


LESSON_SHOTS = ("steps_step0.png", "steps_causal.png", "steps_heads.png")


def lesson_shots(win, out: Path, wanted, settle) -> None:
    """The attention steps' other tabs and the causal what-if (the steps dock floating, as for steps.png)."""
    view = win.steps_view
    for name, tab, causal in (("steps_step0.png", 1, False), ("steps_heads.png", 2, False),
                              ("steps_causal.png", 0, True)):
        if wanted(name):
            win.state.set_causal(causal)
            view.tabs.setCurrentIndex(tab)
            settle()
            view.flush()
            settle()
            view.grab().save(str(out / name))
    view.tabs.setCurrentIndex(0)
    win.state.set_causal(False)


def heatmap_causal_shot(win, out: Path, settle) -> None:
    """heatmap_causal.png: the heatmap with the causal what-if on (masked keys greyed, rows renormalised)."""
    win.heatmap_dock.raise_()
    win.state.set_causal(True)
    settle()
    win.heatmap.flush()
    settle()
    win.heatmap.grab().save(str(out / "heatmap_causal.png"))
    win.state.set_causal(False)


WORKSPACE_SHOTS = ("workspace_read.png", "workspace_learn.png", "workspace_inside.png", "workspace_compare.png",
                   "workspace_corpus.png")


def workspace_shots(app, win, out: Path, wanted, settle) -> None:
    """workspace_<key>.png: the whole window at 1400 x 860 in each workspace (issue 54). Compare first pins the sample
    and analyses it with one word changed; Corpus shows the batch scored before (batch.png's folder)."""
    from PySide6.QtWidgets import QWidget

    from desktop_app.window.workspaces import WORKSPACES

    win.resize(1400, 860)
    if win.workspaces.hint is not None:
        win.workspaces.hint.close()
    for w in WORKSPACES:
        name = f"workspace_{w.key}.png"
        if not wanted(name):
            continue
        if w.key == "compare" and not win.state.pins:
            text = win.editor.toPlainText()
            win.state.pin_current()
            edited = text.replace(" good ", " dull ", 1) if " good " in text else "Dull. " + text
            win.analyze_text(edited)
            wait_until(app, lambda: win.current_prediction is not None and win.current_prediction.text == edited, 60)
        if w.key == "compare":
            win.workspaces.switch(w.key)
            wait_until(app, lambda: win.compare_view.result is not None, 120)
        win.workspaces.switch(w.key)
        settle()
        # a dock that computes only on screen (the Corpus dock) catches up once shown: wait for its current numbers
        wait_until(app, lambda: not any(getattr(v, "stale", False) for v in win.findChildren(QWidget) if v.isVisible()),
                   60)
        settle()
        for view in win.findChildren(QWidget):
            if hasattr(view, "flush") and view.isVisible():
                view.flush()
        settle()
        win.grab().save(str(out / name))


def components_shot(app, win, out: Path, settle) -> None:
    """components.png: the whole window at 1400 x 860 in Inside, the Components dock in front, the FFN of largest
    |value| clicked (issue 53)."""
    win.resize(1400, 860)
    win.workspaces.switch("inside")
    win.docks.raise_view("Components")
    panel = win.docks.get("Components").widget()
    wait_until(app, lambda: win.state.inside.components is not None, 120)
    ca = win.state.inside.components
    ffn = max((n for n in ca.names if n.endswith(".ffn")), key=lambda n: abs(ca.value(n)))
    panel.click_part(ffn)
    wait_until(app, lambda: panel.view.neurons is not None, 120)
    settle()
    panel.view.flush()
    settle()
    win.grab().save(str(out / "components.png"))


def graph_shot(app, win, out: Path, settle) -> None:
    """contribution_graph.png: the whole window at 1400 x 860 in Inside, the Contribution graph dock in front at its
    automatic threshold, the read-out's strongest head path clicked (issue 53, section 2)."""
    win.resize(1400, 860)
    win.docks.raise_view("Contribution graph")
    wait_until(app, lambda: win.state.inside.graph is not None, 120)
    settle()
    view = win.inside_panels["graph"].view
    g = view.graph
    heads = [e for e in range(len(g.weights)) if g.heads[e] >= 0]
    if heads:
        view.click_edge(max(heads, key=lambda e: g.weights[e]))
    settle()
    win.grab().save(str(out / "contribution_graph.png"))


def block_shot(app, win, out: Path, settle) -> None:
    """block.png: the whole window at 1400 x 860 in Learn with the Block dock raised (issue 53, section 4), following
    the review's token "loved" (else the selected one) through the last layer, the FFN's W2 step clicked."""
    win.resize(1400, 860)
    if win.workspaces.hint is not None:
        win.workspaces.hint.close()
    win.workspaces.switch("learn")
    win.docks.raise_view("Block")
    tokens = win.state.prediction.tokens
    if "loved" in tokens:
        win.state.select_token(tokens.index("loved"))
    want = win.state.selection[0] if win.state.selection else 0
    wait_until(app, lambda: (t := win.state.inside.block_trace) is not None and t.position == want, 60)
    diagram = win.inside_panels["block_trace"].view.diagram
    diagram.selected = "w2"
    win.inside_panels["block_trace"].view.refresh()
    settle()
    win.grab().save(str(out / "block.png"))


PATCHING_SAMPLE = "pos_6_7.txt"
PATCHING_EDIT = ("pretty good and worth", "not good and not worth")  # its last sentence negated, as What if would


def patching_shot(app, win, out: Path, settle, site: str = "resid") -> None:
    """patching.png: the whole window at 1400 x 860 in Inside with the Patching dock in front (issue 53, section 3):
    the sample :data:`PATCHING_SAMPLE` pinned (the clean text) and :data:`PATCHING_EDIT` of it current (the corrupted
    one), patched at ``site``, the hover line of the strongest cell. Changes the text on display and the pins: taken
    last. Prints the result's site, shape, scores and time as JSON."""
    import numpy as np

    from model.core.paths import samples_dir

    win.resize(1400, 860)
    win.open_review((samples_dir() / PATCHING_SAMPLE).read_text(encoding="utf-8"))
    wait_until(app, lambda: win.current_prediction is not None
               and win.current_prediction.document.text.startswith("I was fortunate"), 60)
    clean = win.current_prediction.document.text
    win.state.pin_current()
    edited = clean.replace(*PATCHING_EDIT)
    win.analyze_text(edited)
    wait_until(app, lambda: win.current_prediction is not None and win.current_prediction.document.text == edited)
    panel = win.inside_panels["patching"]
    panel.apply_settings({"site": site})
    win.docks.raise_view("Patching")
    if not wait_until(app, lambda: win.state.inside.patching is not None, 600):
        print(f"no patching result: {win.state.inside.patching_note}", file=sys.stderr)
        return
    result, view = win.state.inside.patching, panel.view
    view.flush()
    row, col = np.unravel_index(np.nanargmax(np.abs(view.matrix)), view.matrix.shape)  # the strongest cell
    view._on_hover(view.cell_scene_pos(int(row), int(col)))  # its hover line, as the mouse over it gives
    settle()
    win.grab().save(str(out / "patching.png"))
    print(json.dumps({"patching": {"site": result.site, "shape": list(result.effects.shape),
                                   "clean": result.clean_score, "corrupted": result.corrupted_score,
                                   "passes": result.passes, "elapsed_s": round(result.elapsed_s, 3),
                                   "unaligned": list(result.unaligned)}}))


def main(argv: list[str] | None = None) -> int:
    """Take the screenshots; returns 0 on success."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=None, help="model folder (default: resources/model, else a random model)")
    p.add_argument("--sample", default="pos_1_10.txt", help="sample file in resources/samples")
    p.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    p.add_argument("--imdb", default=str(ROOT.parent / "shared" / "data" / "imdb" / "test.jsonl.gz"),
                   help="IMDB test.jsonl.gz for the batch screenshot")
    p.add_argument("--batch-n", type=int, default=400, help="reviews in the batch screenshot")
    p.add_argument("--only", default="", help="comma-separated file names to write (default: all)")
    p.add_argument("--patching-site", default="resid", choices=("resid", "head", "ffn"),
                   help="what patching.png patches")
    p.add_argument("--window-only", metavar="NAME", default="",
                   help="save only the whole window, with the model view raised, as NAME (e.g. hf_minilm.png)")
    args = p.parse_args(argv)
    only = {n.strip() for n in args.only.split(",") if n.strip()}

    def wanted(name: str) -> bool:
        return not only or name in only

    from model.core.paths import default_model_dir, samples_dir

    model_dir = args.model
    random_model = False
    if model_dir is None:
        if (default_model_dir() / "model.safetensors").is_file():
            model_dir = str(default_model_dir())
        else:
            from model import EncoderConfig
            from tests.fixtures.tiny_models import make_random_model_dir

            model_dir = str(
                make_random_model_dir(
                    Path(tempfile.mkdtemp()) / "random-model",
                    config=EncoderConfig(max_len=512, d_model=128, n_heads=4, n_layers=2, d_ff=512),
                )
            )
            random_model = True
            print("no trained model in resources/model: using a RANDOM model", file=sys.stderr)

    import os

    os.environ.setdefault("ATTENTION_EXPLORER_SETTINGS", str(Path(tempfile.mkdtemp()) / "settings.ini"))
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from desktop_app.app import attach_panels
    from desktop_app.window.main_window import MainWindow

    win = MainWindow(model_dir)
    panels = attach_panels(win)
    win.resize(1600, 1000)
    win.show()
    if not wait_until(app, lambda: win.predictor is not None):
        print("model did not load", file=sys.stderr)
        return 1
    text = (samples_dir() / args.sample).read_text(encoding="utf-8")
    win.open_review(text)
    if not wait_until(app, lambda: win.current_prediction is not None):
        print("no prediction", file=sys.stderr)
        return 1
    if random_model:
        win.setWindowTitle(win.windowTitle() + " [RANDOM MODEL: screenshots before training]")
        win.model_label.setText(win.model_label.text() + "  |  RANDOM untrained model (preview screenshots)")
    pred = win.current_prediction
    # select an informative query token: the one the classification position attends to most (layer 1 mean)
    focus = int(pred.classification_attention(pred.attention.shape[0] - 1)[1:].argmax()) + 1
    win.state.set_layer_head(pred.attention.shape[0] - 1, -1)
    win.state.select_token(focus)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def settle():
        for _ in range(20):
            app.processEvents()
            time.sleep(0.01)

    settle()
    if args.window_only:  # e.g. a Hugging Face model: the whole window, the model view's layer x head grid in front
        win.model_dock.raise_()
        for v in (win.token_view, win.heatmap, win.links_view, win.model_view, win.pe_view):
            v.flush()
        settle()
        win.grab().save(str(out / args.window_only))
        print(json.dumps({"out": str(out / args.window_only), "model_dir": model_dir, "status": win.model_label.text()}))
        win.close()
        return 0
    explain = panels.get("explain")
    if explain is not None:
        from model.explain import CHEAP_METHODS

        wait_until(app, lambda: all(m in explain.results for m in CHEAP_METHODS), 60)
    for v in (win.token_view, win.heatmap, win.links_view, win.model_view, win.pe_view):
        v.flush()
    win.heatmap_dock.raise_()
    settle()
    win.heatmap.flush()
    settle()
    if wanted("window.png"):  # the whole window at its default size (1400 x 860): every tab name readable
        win.resize(1400, 860)
        settle()
        for v in (win.token_view, win.heatmap):
            v.flush()
        settle()
        win.grab().save(str(out / "window.png"))
        win.resize(1600, 1000)
        settle()
    for widget, name in ((win.token_view, "token_view.png"), (win.prediction_panel, "prediction.png")):
        if wanted(name):
            widget.grab().save(str(out / name))
    # the Explanations panel (another helper's) when present
    explain_dock = win.docks.get("Explanations")
    shots = [] if explain_dock is None else [(explain_dock, explain_dock.widget(), "explanations.png")]
    shots += [
        (win.heatmap_dock, win.heatmap, "heatmap.png"),
        (win.links_dock, win.links_view, "links.png"),
        (win.model_dock, win.model_view, "model_view.png"),
    ]
    wait_until(app, lambda: win.state.current_internals() is not None, 60)
    layer_head = (win.state.layer, win.state.head)
    win.state.set_layer_head(layer_head[0], 0)  # the neuron and step views show one head
    for dock, view, name in [(win.neuron_dock, win.neuron_view, "neuron.png"),
                             (win.steps_dock, win.steps_view, "steps.png"), (win.pe_dock, win.pe_view, "pe.png")]:
        lessons = name == "steps.png" and any(wanted(n) for n in LESSON_SHOTS)
        if wanted(name) or lessons:  # these need room: shown floating at a fixed size
            dock.setFloating(True)
            dock.resize(1300, 820 if name == "neuron.png" else 760)
            dock.show()
            settle()
            view.flush()
            settle()
            if wanted(name):
                view.grab().save(str(out / name))
            if lessons:
                lesson_shots(win, out, wanted, settle)
            dock.setFloating(False)
    win.state.set_layer_head(*layer_head)
    if wanted("heatmap_causal.png"):
        heatmap_causal_shot(win, out, settle)
    for dock, view, name in shots:
        if not wanted(name):
            continue
        dock.raise_()
        settle()
        if hasattr(view, "flush"):
            view.flush()
        settle()
        view.grab().save(str(out / name))
    win.heatmap_dock.raise_()
    settle()
    batch = panels.get("batch")
    if batch is not None and (wanted("batch.png") or wanted("workspace_corpus.png")):
        scratch = tempfile.TemporaryDirectory(prefix="ae-screenshots-")
        folder = write_review_folder(Path(args.imdb), args.batch_n, Path(scratch.name) / "aclImdb-test")
        finished = []
        batch.scoring_finished.connect(finished.append)
        win.paths_dropped.emit([str(folder)])  # what a drop of the folder on the window does
        wait_until(app, lambda: bool(finished), 600)
        from PySide6.QtCore import Qt

        p_positive = batch.table_model.column_of("positive")
        batch.ui.view.sortByColumn(p_positive, Qt.SortOrder.AscendingOrder)  # the most negative reviews first
        settle()
        if wanted("batch.png"):
            batch.grab().save(str(out / "batch.png"))
        scratch.cleanup()
    if any(wanted(n) for n in WORKSPACE_SHOTS):
        workspace_shots(app, win, out, wanted, settle)
    if wanted("components.png"):
        components_shot(app, win, out, settle)
    if wanted("contribution_graph.png"):
        graph_shot(app, win, out, settle)
    if wanted("block.png") and "block_trace" in getattr(win, "inside_panels", {}):
        block_shot(app, win, out, settle)
    if wanted("patching.png"):  # last: it pins a text and changes the one on display
        patching_shot(app, win, out, settle, args.patching_site)
    print(
        json.dumps(
            {
                "out": str(out),
                "model_dir": model_dir,
                "random_model": random_model,
                "label": pred.label,
                "num_tokens": pred.num_tokens,
                "files": sorted(p.name for p in out.glob("*.png")),
            }
        )
    )
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
