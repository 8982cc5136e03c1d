"""WiSE-FT weight interpolation (``interpolate`` stage) and model folders taken from git history (``git`` stage).

Every floating-point weight becomes ``(1 - alpha) * base + alpha * finetuned`` (Wortsman et al. 2022, "Robust
fine-tuning of zero-shot models", eq. 1). The shipped model is alpha 0.85 between step 4 (git f06b43b) and step 7
(git b8f39ea): the line between a model and its descendant stays in one basin and trades step 4's accuracy on
reviews against step 7's reading of negation. No training, no data: about a second per alpha on a CPU.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from model.datasets.splits import UsageError

from ..core.weights import CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE, load_state, save_state
from .common import ROOT


@dataclass
class InterpolateOptions:
    """Options of the ``interpolate`` stage: the ``base`` and ``finetuned`` model folders (or stages) and the
    ``alphas`` in [0, 1]; the output holds one model folder per alpha (``alpha0.85``)."""

    base: str = ""
    finetuned: str = ""
    alphas: tuple = (0.85,)


@dataclass
class GitOptions:
    """Options of the ``git`` stage: the ``commit`` whose ``resources/model`` folder is taken."""

    commit: str = ""


def interpolate(base: Path, finetuned: Path, out: Path, alpha: float) -> Path:
    """Write the model folder ``(1 - alpha) * base + alpha * finetuned`` to ``out`` (float32 arithmetic; integer
    tensors, ``config.json`` and ``tokenizer.json`` from ``base``); returns ``out``. Raises ValueError for alpha
    outside [0, 1], KeyError when the parameter names differ, FileNotFoundError for a missing file."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha}")
    a, b = load_state(Path(base) / WEIGHTS_FILE), load_state(Path(finetuned) / WEIGHTS_FILE)
    if set(a) != set(b):
        raise KeyError(f"{base} and {finetuned} have different parameters: {sorted(set(a) ^ set(b))[:5]}")
    out.mkdir(parents=True, exist_ok=True)
    save_state({k: (1 - alpha) * v.float() + alpha * b[k].float() if v.dtype.is_floating_point else v
                for k, v in a.items()}, out / WEIGHTS_FILE)
    for name in (CONFIG_FILE, TOKENIZER_FILE):
        shutil.copyfile(Path(base) / name, out / name)
    return out


def write_interpolations(data: Path, out: Path, opts: InterpolateOptions, device=None) -> dict:
    """The ``interpolate`` stage: one folder ``out/alpha{a:.2f}`` per alpha; returns ``{"folders": [...]}``."""
    folders = [interpolate(Path(opts.base), Path(opts.finetuned), out / f"alpha{a:.2f}", float(a)) for a in opts.alphas]
    return {"folders": [f.name for f in folders]}


def from_git(data: Path, out: Path, opts: GitOptions, device=None) -> dict:
    """The ``git`` stage: a model folder's weights, config and tokenizer as committed at ``opts.commit`` (step 4 is
    f06b43b, step 7 b8f39ea), written to ``out``. Raises UsageError when git or the commit is not there."""
    out.mkdir(parents=True, exist_ok=True)
    for name in (WEIGHTS_FILE, CONFIG_FILE, TOKENIZER_FILE):
        spec = f"{opts.commit}:resources/model/{name}"
        try:
            blob = subprocess.run(["git", "-C", str(ROOT), "show", spec], check=True, capture_output=True).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            raise UsageError(f"git show {spec} failed (no git history here?): {exc}") from None
        (out / name).write_bytes(blob)
    return {"commit": opts.commit}
