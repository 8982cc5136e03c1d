"""The teacher's logits keyed by text: written once on a GPU, read by the CPU stages (the ``artifact`` stage).

Fine-tuning the teacher and scoring every text with it is the only part of the recipe that needs a GPU
(``recipes/teacher_gpu.toml``). Its result is one ``.npz`` file, committed to ``model/training/artifacts/``:

* ``keys``: uint64 [K], sorted: :func:`text_keys` of each distinct text (the first 8 bytes of BLAKE2b of its UTF-8
  bytes, little-endian; two of a million texts share a key with probability about 3e-8, and writing checks it);
* ``logits``: float16 [K, C], the teacher's logits of each text (C = 2 for IMDB: negative, positive);
* ``provenance``: a JSON string (a 0-d unicode array: no pickle): the teacher's base and fine-tuning settings, its
  validation and test accuracy, the recipe and git commit, the SHA-256 of the data splits' JSON lines, the device,
  the date (UTC), each stage's seconds and how many texts each set gave.

A CPU recipe (``recipes/cpu_distill.toml``) names the file as its teacher: the ``augment`` and ``sentences`` stages
regenerate their texts with the same seed and code (numpy's PCG64 is the same on every machine) and
:meth:`TeacherArtifact.lookup` gives their logits; the ``distill`` stage looks up the reviews.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model.datasets.splits import JSONL_SUFFIXES, UsageError, read_split, split_file
from model.datasets.task_data import read_table
from model.files.atomic import atomic_write_bytes
from model.files.compression import open_text

from . import common as c
from .finetune_hf import score_texts

SPLITS = ("train", "unsup", "test")
FORMAT = "teacher-logits-by-text/1"


class MissingTextsError(UsageError):
    """Texts the artifact holds no logits for: the message names the artifact, how many are missing of how many
    asked, and the first one (the pipeline prints it on one line and exits 2)."""


def text_keys(texts: list[str]) -> np.ndarray:
    """uint64 [N] keys of N texts: the first 8 bytes of BLAKE2b (digest size 8, RFC 7693) of the UTF-8 text, read
    little-endian."""
    return np.fromiter((int.from_bytes(hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest(), "little")
                        for t in texts), dtype=np.uint64, count=len(texts))


def is_artifact(path: str | Path) -> bool:
    """Whether ``path`` is a file in this module's format (an ``.npz`` holding ``keys``), not a teacher folder or
    a split-ordered ``logits.npz``."""
    path = Path(path)
    if not (path.is_file() and path.suffix == ".npz"):
        return False
    with np.load(path, allow_pickle=False) as z:
        return "keys" in z.files


@dataclass(frozen=True)
class TeacherArtifact:
    """A loaded artifact: ``path``, ``keys`` uint64 [K] sorted, ``logits`` float16 [K, C], ``provenance`` dict."""

    path: Path
    keys: np.ndarray
    logits: np.ndarray
    provenance: dict

    @classmethod
    def load(cls, path: str | Path) -> TeacherArtifact:
        """Read an artifact; UsageError naming the file when it is missing or not in this format (no keys or logits,
        sizes that disagree, unsorted keys)."""
        path = Path(path)
        if path.is_file() and not zipfile.is_zipfile(path):
            raise UsageError(f"teacher artifact {path}: not a {FORMAT} file (not an .npz archive)")
        try:
            with np.load(path, allow_pickle=False) as z:
                keys, logits, prov = z["keys"], z["logits"], json.loads(str(z["provenance"]))
        except (OSError, KeyError, ValueError) as exc:
            raise UsageError(f"teacher artifact {path}: not a {FORMAT} file ({exc})") from None
        if keys.dtype != np.uint64 or logits.ndim != 2 or len(keys) != len(logits) or (keys[1:] <= keys[:-1]).any():
            raise UsageError(f"teacher artifact {path}: keys must be sorted distinct uint64 matching logits [K, C]")
        return cls(path, keys, logits, prov)

    def lookup(self, texts: list[str]) -> np.ndarray:
        """float32 [N, C] logits of N texts, in order. Raises :class:`MissingTextsError` when some are not in the
        artifact (a text made by other code or another seed, or another data folder)."""
        keys = text_keys(texts)
        pos = np.minimum(np.searchsorted(self.keys, keys), max(len(self.keys) - 1, 0))
        found = self.keys[pos] == keys if len(self.keys) else np.zeros(len(keys), bool)
        if not found.all():
            first = texts[int(np.flatnonzero(~found)[0])]
            raise MissingTextsError(
                f"teacher artifact {self.path}: {int((~found).sum())} of {len(texts)} texts have no logits (first: "
                f"{first[:80]!r}); they must be made by the same code, seed and data as the GPU run's "
                f"(provenance: recipe {self.provenance.get('recipe', '?')}, commit {self.provenance.get('commit', '?')})")
        return self.logits[pos].astype(np.float32)


def write_artifact(path: str | Path, texts: list[str], logits: np.ndarray, provenance: dict) -> dict:
    """Write N ``texts`` and their float [N, C] ``logits`` as an artifact (atomically); a text given twice keeps its
    first logits. Returns ``{"texts", "distinct", "bytes"}``. Raises ValueError for two different texts with one
    key (a BLAKE2b-64 collision) or sizes that disagree."""
    logits = np.asarray(logits, np.float32)
    if logits.ndim != 2 or len(logits) != len(texts):
        raise ValueError(f"logits must be [N, C] for N = {len(texts)} texts, got {logits.shape}")
    keys = text_keys(texts)
    order = np.argsort(keys, kind="stable")
    first = order[np.concatenate([[True], keys[order][1:] != keys[order][:-1]])] if len(order) else order
    distinct = {texts[i] for i in first}
    if len(distinct) != len(set(texts)):
        raise ValueError("two different texts share a BLAKE2b-64 key; widen the key")
    buf = io.BytesIO()
    np.savez_compressed(buf, keys=keys[first], logits=logits[first].astype(np.float16),
                        provenance=np.array(json.dumps({"format": FORMAT, **provenance}, sort_keys=True)))
    atomic_write_bytes(path, buf.getvalue())
    return {"texts": len(texts), "distinct": len(first), "bytes": len(buf.getvalue())}


def data_sha256(data: Path) -> dict:
    """``{split: SHA-256 hex}`` of each split's decompressed JSON lines in ``data`` (the same for .gz and .xz)."""
    out = {}
    for name in SPLITS:
        try:
            path = split_file(data, name, JSONL_SUFFIXES)
        except FileNotFoundError:
            continue
        h = hashlib.sha256()
        with open_text(path, "utf-8") as fh:
            for line in fh:
                h.update(line.encode("utf-8"))
        out[name] = h.hexdigest()
    return out


def git_commit() -> str:
    """``git rev-parse HEAD`` of the repository (``+dirty`` when tracked files differ), or "" without git."""
    try:
        run = lambda *a: subprocess.run(["git", "-C", str(c.ROOT), *a], capture_output=True, text=True,  # noqa: E731
                                        check=True, timeout=30).stdout.strip()
        return run("rev-parse", "HEAD") + ("+dirty" if run("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.SubprocessError):
        return ""


@dataclass
class ArtifactOptions:
    """Options of the ``artifact`` stage: ``teacher`` (the teacher stage: its folder with ``logits.npz`` and
    ``metrics.json``), ``sets`` (transfer sets whose rows go in as labelled), ``score`` (files or stages whose texts the
    teacher scores now, cut to ``max_len`` tokens, in ``precision``), ``commit`` (the code's git commit; empty: read
    from git)."""

    teacher: str = ""
    sets: tuple = ()
    score: tuple = ()
    max_len: int = 128
    precision: str = "auto"
    commit: str = ""


def write_artifact_stage(data: Path, out: Path, opts: ArtifactOptions, device) -> dict:
    """The ``artifact`` stage: the teacher's logits of every review of ``data`` (from its ``logits.npz``, file order),
    of every row of ``opts.sets`` and of the texts of ``opts.score`` into the artifact ``out``, with provenance (module
    docstring). Returns :func:`write_artifact`'s counts. Raises UsageError without a teacher folder."""
    teacher = Path(opts.teacher)
    if not (teacher / "logits.npz").is_file():
        raise UsageError(f"artifact: teacher {teacher} has no logits.npz (a teacher stage with soft_labels = true)")
    texts, rows, counts = [], [], {}
    with np.load(teacher / "logits.npz") as z:
        for split in SPLITS:
            split_texts = read_split(data, split)[0]
            if len(split_texts) != len(z[split]):
                raise UsageError(f"artifact: {teacher}/logits.npz has {len(z[split])} {split} rows, {data} has "
                                 f"{len(split_texts)}")
            texts += split_texts
            rows.append(z[split])
            counts[split] = len(split_texts)
    for spec in opts.sets:
        table = read_table(Path(spec))
        texts += [r["text"] for r in table]
        rows.append(np.asarray([r["logits"] for r in table], np.float32).reshape(len(table), -1))
        counts[Path(spec).name] = len(table)
    for spec in opts.score:
        scored = [r["text"] for r in read_table(Path(spec))]
        texts += scored
        rows.append(score_texts(teacher, scored, opts.max_len, device, opts.precision))
        counts[Path(spec).name] = len(scored)
    metrics = json.loads((teacher / "metrics.json").read_text()) if (teacher / "metrics.json").is_file() else {}
    stages_log = out.parent / "stages.jsonl"
    recipe_log = out.parent / "recipe.json"
    provenance = {
        "teacher": {k: metrics.get(k) for k in ("base", "hyperparameters", "validation", "test_accuracy",
                                               "train_wall_s", "epochs")},
        "recipe": json.loads(recipe_log.read_text()) if recipe_log.is_file() else None,
        "commit": opts.commit or git_commit(), "data_sha256": data_sha256(data), "texts": counts,
        "hardware": c.hardware(), "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "stages": [json.loads(line) for line in stages_log.read_text().splitlines()] if stages_log.is_file() else [],
        "key": "blake2b-64 of the UTF-8 text, little-endian uint64"}
    return write_artifact(out, texts, np.concatenate(rows), provenance)


def main(argv: list[str] | None = None) -> int:
    """``python -m model.training.teacher_artifact FILE``: print an artifact's size, text count, logit range and
    provenance as JSON; exit 2 with one line for a file that is not one."""
    import argparse
    import sys

    p = argparse.ArgumentParser(description="Show a teacher artifact (teacher logits keyed by text).")
    p.add_argument("artifact")
    args = p.parse_args(argv)
    try:
        art = TeacherArtifact.load(args.artifact)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    z = art.logits.astype(np.float32)
    print(json.dumps({"file": str(art.path), "bytes": art.path.stat().st_size, "texts": len(art.keys),
                      "logits": {"classes": z.shape[1], "min": float(z.min(initial=0)), "max": float(z.max(initial=0))},
                      "provenance": art.provenance}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
