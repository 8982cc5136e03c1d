"""ONNX Runtime's dynamic int8 quantization of the bundled model against PyTorch float32 (issue 45, part 3).

Usage::

    python -m benchmarks.int8 [--data ../shared/data/imdb/test.jsonl.gz] [--n 500] [--rounds 2] [--batch 32]
        [--threads N]

Needs ``onnxruntime`` and ``onnx`` (not project dependencies: ``pip install onnxruntime onnx``, the CPU build). The
bundled model's classifier (logits only) is exported once to ONNX (opset 17) in a temporary folder, then quantized
with ``onnxruntime.quantization.quantize_dynamic`` (int8 weights, activations quantized per call). ``--n`` seeded
IMDB test reviews are encoded once (cut head+tail to the model's length, as ``predict(long_text="head_tail")``),
sorted by length and padded into batches of ``--batch``; the same batches run through PyTorch float32, ONNX Runtime
float32 and ONNX Runtime int8, the three taking turns ``--rounds`` times. Prints one JSON line per engine
(reviews/s: median of the rounds) and the int8 engine's label agreement with PyTorch float32 and its largest
probability difference. Tokenisation is not timed (the same for all).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from model.predictor.predictor import Predictor

from .sample import seeded_reviews


class Logits(torch.nn.Module):
    """The model's logits only: (ids int64 (B, T), mask bool (B, T)) -> (B, C)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model(ids, mask)[0]


def batches(p: Predictor, texts: list[str], size: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(ids int64 (B, T), mask bool (B, T))`` of ``texts`` cut to the model's length, by length, ``size`` a batch."""
    ids = [x for x, _ in p.encoder.encode_ids_batch(texts)]
    order = np.argsort([len(x) for x in ids], kind="stable")
    return [p.encoder.pad_ids([ids[i] for i in order[s:s + size]]) for s in range(0, len(order), size)]


def export(p: Predictor, folder: Path) -> tuple[Path, Path]:
    """``(float32 .onnx, int8 .onnx)`` of ``p``'s model in ``folder``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    f32, i8 = folder / "model.onnx", folder / "model.int8.onnx"
    ids, mask = p.encoder.pad_ids([np.arange(5, 25, dtype=np.int64)])
    torch.onnx.export(Logits(p.model).eval(), (torch.from_numpy(ids), torch.from_numpy(mask)), str(f32),
                      input_names=["ids", "mask"], output_names=["logits"], opset_version=17, dynamo=False,
                      dynamic_axes={"ids": {0: "batch", 1: "tokens"}, "mask": {0: "batch", 1: "tokens"},
                                    "logits": {0: "batch"}})
    quantize_dynamic(str(f32), str(i8), weight_type=QuantType.QInt8)
    return f32, i8


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns 0."""
    import onnxruntime as ort

    ap = argparse.ArgumentParser(description="ONNX Runtime dynamic int8 against PyTorch float32.")
    ap.add_argument("--data", default="../shared/data/imdb/test.jsonl.gz")
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=0, help="threads of both engines (default: torch's)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    sample = seeded_reviews(args.data, args.n)
    p = Predictor.from_pretrained(device="cpu")
    data = batches(p, sample, args.batch)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = torch.get_num_threads()
    with tempfile.TemporaryDirectory() as tmp:
        f32, i8 = export(p, Path(tmp))
        sizes = {"onnx_fp32_mb": f32.stat().st_size / 2**20, "onnx_int8_mb": i8.stat().st_size / 2**20}
        sessions = {k: ort.InferenceSession(str(f), opts, providers=["CPUExecutionProvider"])
                    for k, f in (("onnx_fp32", f32), ("onnx_int8", i8))}

    def run_torch() -> np.ndarray:
        with torch.inference_mode():
            return np.concatenate([p.model(torch.from_numpy(i), torch.from_numpy(m))[0].numpy() for i, m in data])

    def runner(name: str):
        return lambda: np.concatenate([sessions[name].run(["logits"], {"ids": i, "mask": m})[0] for i, m in data])

    engines = {"torch_fp32": run_torch, "onnx_fp32": runner("onnx_fp32"), "onnx_int8": runner("onnx_int8")}
    logits = {k: f() for k, f in engines.items()}  # warm-up, and each engine's logits
    rate: dict[str, list[float]] = {k: [] for k in engines}
    for _ in range(args.rounds):
        for k, f in engines.items():
            t = time.perf_counter()
            f()
            rate[k].append(len(sample) / (time.perf_counter() - t))
    ref = torch.from_numpy(logits["torch_fp32"]).softmax(-1).numpy()
    base = float(np.median(rate["torch_fp32"]))
    print(json.dumps({"reviews": len(sample), "threads": torch.get_num_threads(), "ort": ort.__version__,
                      "torch": torch.__version__, **sizes}), flush=True)
    for k in engines:
        probs = torch.from_numpy(logits[k]).softmax(-1).numpy()
        print(json.dumps({"engine": k, "reviews_per_s": float(np.median(rate[k])),
                          "speedup": float(np.median(rate[k])) / base,
                          "label_agreement": float((probs.argmax(1) == ref.argmax(1)).mean()),
                          "max_probability_diff": float(np.abs(probs - ref).max())}), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
