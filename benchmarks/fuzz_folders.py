"""Robustness fuzz, part 1: hundreds of broken Hugging Face folders opened by ``Predictor.from_pretrained``.

``python -m benchmarks.fuzz_folders [--n 300] [--seed 0] [--timeout 60] [--show 0]``

Builds tiny random folders of every family (:func:`tests.fixtures.tiny_hf.make_tiny_hf_dir`, with and without a
classification head), damages copies at random (one or two mutations each: config fields set to wrong types,
out-of-range, non-finite or absurd values, fields deleted, ``model_type`` swapped; tensors dropped, renamed,
reshaped, re-typed, poisoned with NaN/Inf/1e38 or added; weights, config or tokenizer truncated, garbled, deleted
or replaced by a pipe or a folder; tokenizer ids pushed beyond the embedding table) and opens each one in a
separate server process (restarted after a crash or a hang), so a segfault or a freeze is counted, not fatal.

Each case ends as one of:

* ``clear error``: ValueError/FileNotFoundError in one paragraph naming the folder, never "see the report above";
* ``unclear error``: such an error without those properties;
* ``accepted``: it opened, every parameter holds the values of a tensor of its weights file (no random
  initialisation), and ``predict`` gives finite attention and probabilities;
* ``silently random``: it opened with a parameter whose values come from no tensor in the file;
* ``NaN model``: it opened and ``predict`` gives NaN or infinite numbers;
* ``crash``: any other exception (at load or predict), or the process died;
* ``hang``: no answer within ``--timeout`` seconds.

Prints one JSON object: the counts, and ``--show`` examples of each outcome. Asserts nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
from pathlib import Path

from benchmarks.fuzz_common import answer_lines, fuzz_main

TEXT = "A slow start, then a wonderful second half. I would not watch it again."
VALUES = [-1, 0, 1, 2, 3, 7, 10**6, 10**12, 1.5, 0.5, -0.5, "32", "", None, True, [], {}, [5], {"a": 1},
          math.nan, math.inf, -math.inf, 1e308, "gelu", "bert", "\x00", "\ud800"]
FIELDS = ["hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size",
          "max_position_embeddings", "type_vocab_size", "hidden_dropout_prob", "attention_probs_dropout_prob",
          "layer_norm_eps", "pad_token_id", "hidden_act", "architectures", "id2label", "label2id", "num_labels",
          "position_embedding_type", "embedding_size", "dim", "n_layers", "n_heads", "hidden_dim", "dropout",
          "activation", "sinusoidal_pos_embds", "relative_attention", "pos_att_type", "position_buckets",
          "max_relative_positions", "position_biased_input", "num_hidden_groups", "inner_group_num",
          "torch_dtype", "tie_word_embeddings", "classifier_dropout", "problem_type"]
MODEL_TYPES = ["bert", "distilbert", "roberta", "xlm-roberta", "albert", "electra", "deberta-v2", "deberta",
               "camembert", "gpt2", "t5", "llama", "", "nonsense"]


# -- mutations (each damages a folder in place) ---------------------------------------------------------------
def _config(folder: Path) -> dict:
    return json.loads((folder / "config.json").read_text(encoding="utf-8"))


def _set_config(folder: Path, cfg) -> None:
    (folder / "config.json").write_text(json.dumps(cfg, allow_nan=True), encoding="utf-8", errors="surrogatepass")


def m_set_field(folder, rng):
    cfg = _config(folder)
    key = rng.choice(FIELDS + list(cfg))
    cfg[key] = rng.choice(VALUES)
    _set_config(folder, cfg)
    return f"config {key} = {cfg[key]!r}"[:80]


def m_delete_field(folder, rng):
    cfg = _config(folder)
    key = rng.choice(sorted(cfg))
    del cfg[key]
    _set_config(folder, cfg)
    return f"config {key} deleted"


def m_model_type(folder, rng):
    cfg = _config(folder)
    cfg["model_type"] = rng.choice(MODEL_TYPES)
    _set_config(folder, cfg)
    return f"model_type = {cfg['model_type']!r}"


def m_id2label(folder, rng):
    cfg = _config(folder)
    cfg["id2label"] = rng.choice([{"1": "a", "2": "b"}, {"0": "a"}, {"0": 5, "1": "b"}, {"x": "a", "y": "b"},
                                  ["a", "b"], {"0": "a", "1": "b", "2": "c"}])
    _set_config(folder, cfg)
    return f"id2label = {cfg['id2label']!r}"


def m_garble_file(folder, rng):
    name = rng.choice(["config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors"])
    path = folder / name
    data = path.read_bytes()
    how = rng.choice(["truncate", "flip", "empty", "binary", "delete", "fifo", "folder", "deep", "not an object"])
    path.unlink()
    if how == "truncate":
        path.write_bytes(data[: rng.randrange(max(1, len(data)))])
    elif how == "flip":
        buf = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(min(len(buf), 2000))
            buf[i] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(buf))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "binary":
        path.write_bytes(bytes(rng.randrange(256) for _ in range(300)))
    elif how == "fifo" and hasattr(os, "mkfifo"):
        os.mkfifo(path)
    elif how == "folder":
        path.mkdir()
    elif how == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif how == "not an object":
        path.write_text("[1, 2, 3]")
    return f"{name}: {how}"


def _tensors(folder):
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def _save(folder, tensors):
    from safetensors.torch import save_file

    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})


def m_tensors(folder, rng):
    import torch

    t = _tensors(folder)
    keys = sorted(t)
    key = rng.choice(keys)
    how = rng.choice(["drop", "drop3", "rename", "rename all", "transpose", "slice", "fp16", "int", "nan", "inf",
                      "huge", "extra", "extra layer", "scalar"])
    if how == "drop":
        del t[key]
    elif how == "drop3":
        for k in rng.sample(keys, min(3, len(keys))):
            del t[k]
    elif how == "rename":
        t["renamed." + key] = t.pop(key)
    elif how == "rename all":
        t = {k.replace(".", "_", 1): v for k, v in t.items()}
    elif how == "transpose" and t[key].dim() == 2:
        t[key] = t[key].t().contiguous()
    elif how == "slice":
        t[key] = t[key][: max(1, t[key].shape[0] - 1)].contiguous()
    elif how == "fp16":
        t[key] = t[key].half()
    elif how == "int":
        t[key] = (t[key] * 100).to(torch.int32)
    elif how in ("nan", "inf", "huge"):
        t[key] = t[key].clone().float()
        t[key].view(-1)[0] = {"nan": math.nan, "inf": math.inf, "huge": 1e38}[how]
    elif how == "extra":
        t["cls.predictions.bias"] = torch.zeros(7)
    elif how == "extra layer":
        t[key.replace("layer.0.", "layer.9.").replace("layer.1.", "layer.9.")] = t[key].clone()
    elif how == "scalar":
        t[key] = torch.tensor(1.0)
    _save(folder, t)
    return f"weights: {how} {key}"[:90]


def m_tokenizer(folder, rng):
    path = folder / "tokenizer.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    how = rng.choice(["id beyond", "special id beyond", "no vocab", "model type", "max length"])
    if how == "id beyond" and isinstance(data["model"].get("vocab"), dict):
        data["model"]["vocab"]["zzfar"] = rng.choice([300, 10**5, 2**31 - 1])
    elif how == "special id beyond" and isinstance(data.get("post_processor"), dict):
        specials = data["post_processor"].get("special_tokens") or {}
        for spec in specials.values():
            spec["ids"] = [rng.choice([999, 10**6])]
        data["post_processor"]["cls"] = ["<s>", 99_999]
    elif how == "no vocab":
        data["model"]["vocab"] = {}
    elif how == "model type":
        data["model"]["type"] = rng.choice(["Unigram", "BPE", "WordLevel", "Nope"])
    elif how == "max length":
        cfg_path = folder / "tokenizer_config.json"
        cfg = json.loads(cfg_path.read_text())
        cfg["model_max_length"] = rng.choice([-1, 0, 1, 10**30, "64", None])
        cfg_path.write_text(json.dumps(cfg))
    path.write_text(json.dumps(data), encoding="utf-8")
    return f"tokenizer: {how}"


def _mutate(mutation, folder: Path, rng: random.Random) -> str:
    """Apply one mutation; one that cannot apply (its file already broken by the other) says so."""
    try:
        return mutation(folder, rng)
    except Exception as exc:  # noqa: BLE001 - e.g. the weights already garbled by the other mutation
        return f"{mutation.__name__} not applied ({type(exc).__name__})"


MUTATIONS = [m_set_field, m_set_field, m_set_field, m_delete_field, m_model_type, m_id2label, m_garble_file,
             m_tensors, m_tensors, m_tensors, m_tokenizer]


# -- the server: opens one folder per request -----------------------------------------------------------------
def _fingerprint(tensor) -> tuple:
    t = tensor.detach().float().contiguous().cpu()
    return tuple(t.shape), hashlib.sha1(t.numpy().tobytes()).hexdigest()


def foreign_parameters(model, folder: Path) -> list[str]:
    """Names of the parameters of ``model`` whose values are in no tensor of the folder's safetensors files."""
    from safetensors.torch import load_file

    known = set()
    for file in folder.glob("*.safetensors"):
        known.update(_fingerprint(v) for v in load_file(str(file)).values())
    return [name for name, p in model.named_parameters() if _fingerprint(p) not in known]


def judge(folder: Path) -> dict:
    """Open ``folder`` and classify the outcome (see the module docstring)."""
    import numpy as np

    from model import Predictor

    try:
        p = Predictor.from_pretrained(folder, device="cpu")
    except (ValueError, FileNotFoundError) as exc:
        msg = str(exc)
        clear = "\n" not in msg and "above" not in msg.lower() and str(folder) in msg
        return {"outcome": "clear error" if clear else "unclear error", "message": msg}
    except Exception as exc:  # noqa: BLE001 - every other exception is what the fuzz counts
        return {"outcome": "crash", "message": f"load: {type(exc).__name__}: {exc}"}
    foreign = foreign_parameters(p.model.hf, folder)
    if foreign:
        return {"outcome": "silently random", "message": ", ".join(foreign[:3])}
    try:
        pred = p.predict(TEXT)
    except Exception as exc:  # noqa: BLE001
        return {"outcome": "crash", "message": f"predict: {type(exc).__name__}: {exc}"}
    if not (np.isfinite(pred.attention).all() and np.isfinite(pred.probabilities).all()):
        return {"outcome": "NaN model", "message": ""}
    return {"outcome": "accepted", "message": getattr(p.config, "load_note", "")}


def serve() -> None:
    """Answer folder paths on stdin with one JSON line each on stdout."""
    import logging
    import warnings

    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    import transformers

    transformers.utils.logging.set_verbosity_error()
    answer_lines(lambda path, _n: judge(path))


def prepare(root: Path, rng: random.Random):
    """The sources (a tiny folder of every family, with and without a head) and the case maker."""
    import transformers

    from tests.fixtures.tiny_hf import FAMILIES, make_tiny_hf_dir

    transformers.utils.logging.disable_progress_bar()
    sources = [make_tiny_hf_dir(root / f"src-{f}-{h}", f, head=h) for f in FAMILIES for h in (True, False)]

    def make_case(i: int):
        folder = root / f"case{i}"
        shutil.copytree(rng.choice(sources), folder)
        return folder, [_mutate(m, folder, rng) for m in rng.sample(MUTATIONS, rng.choice([1, 1, 2]))]

    return make_case


def main(argv=None) -> dict:
    """Run the fuzz; returns (and prints) the counts."""
    return fuzz_main("benchmarks.fuzz_folders", __doc__, argv, 300, serve, prepare)


if __name__ == "__main__":
    main()
