"""Transfer sets for knowledge distillation: texts labelled by a fine-tuned teacher, written and read back.

Written by the ``augment`` and ``sentences`` stages as gzip-ed JSON lines ``{"text", "logits": [negative, positive]}``
from the fitting train reviews; read by the ``distill`` stage (:func:`transfer_set`; Hinton et al. 2015). The teacher
is a fine-tuned classifier folder (it scores the texts) or a teacher artifact (:mod:`.teacher_artifact`: the logits
of the same texts, made on a GPU, looked up by text); the texts are the same either way (seeded, same code):

* :func:`write_augmented`: ``copies`` perturbed copies of every fitting and unlabeled review (Tang et al. 2019,
  section 3.2): with probability ``p_window`` only a window of 20-70% of the words is kept, then each word becomes
  ``[MASK]`` with probability ``p_mask`` or a random corpus word with ``p_replace``; rows are copy-major.
* :func:`write_sentences`: the sentences of 4 to 40 words; "The acting was not bad at all." carries its own
  sentiment, which a student trained on whole reviews rarely sees alone.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from model.datasets.splits import UsageError, read_split, seeded_subset, train_split
from model.datasets.task_data import read_table

from ..core.tokenizer import TextEncoder
from .common import write_rows
from .finetune_hf import score_texts
from .teacher_artifact import TeacherArtifact, is_artifact

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|<br\s*/?>")


@dataclass
class SentenceOptions:
    """Options of the ``sentences`` stage: ``teacher`` (folder, stage or teacher artifact), ``max_len`` teacher tokens
    (head+tail cut), ``precision`` of the teacher's forward pass (:func:`.common.resolve_precision`)."""

    teacher: str = ""
    seed: int = 0
    max_len: int = 128
    precision: str = "auto"


@dataclass
class AugmentOptions(SentenceOptions):
    """Options of the ``augment`` stage: those of ``sentences``, ``copies`` and the perturbation probabilities."""

    max_len: int = 512
    copies: int = 2
    p_window: float = 0.5
    p_mask: float = 0.1
    p_replace: float = 0.05


def augment(words: list[str], pool: list[str], rng: np.random.Generator, p_window: float = 0.5,
            p_mask: float = 0.1, p_replace: float = 0.05) -> str:
    """One perturbed copy of a review given as its words; ``pool`` holds words to draw replacements from."""
    n = len(words)
    if n > 10 and rng.random() < p_window:
        length = int(n * rng.uniform(0.2, 0.7))
        start = int(rng.integers(0, n - length + 1))
        words = words[start : start + length]
    out = list(words)
    roll = rng.random(len(out))
    for i in np.flatnonzero(roll < p_mask + p_replace):
        out[i] = "[MASK]" if roll[i] < p_mask else pool[int(rng.integers(len(pool)))]
    return " ".join(out)


def review_sentences(text: str, min_words: int = 4, max_words: int = 40) -> list[str]:
    """The sentences of one review with ``min_words`` to ``max_words`` words (split after . ! ? and at <br />)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if min_words <= len(s.split()) <= max_words]


def label_texts(texts: list[str], teacher: str, max_len: int, device, precision: str = "auto") -> np.ndarray:
    """float32 [N, C] teacher logits of N texts: looked up in a teacher artifact (MissingTextsError when some are
    not there), or scored by a classifier folder (:func:`.finetune_hf.score_texts`, head+tail cut to ``max_len``)."""
    if is_artifact(teacher):
        return TeacherArtifact.load(teacher).lookup(texts)
    return score_texts(Path(teacher), texts, max_len, device, precision)


def label_and_write(texts: list[str], opts: SentenceOptions, out: Path, device) -> None:
    """Label ``texts`` by ``opts.teacher`` (:func:`label_texts`) and write ``{"text", "logits": [2 floats]}`` rows
    (:func:`.common.write_rows`) to ``out``."""
    logits = label_texts(texts, opts.teacher, opts.max_len, device, opts.precision)
    write_rows(({"text": t, "logits": [round(float(v), 4) for v in z]} for t, z in zip(texts, logits)), out)


def augmented_texts(data: Path, opts: AugmentOptions) -> list[str]:
    """The augmented texts (module docstring), ``opts.copies`` times the fitting and unlabeled reviews, copy-major:
    the same for the same data, seed, options and code on any machine (numpy's PCG64)."""
    train_texts, _, _, fit_idx = train_split(data, opts.seed)
    sources = [train_texts[i] for i in fit_idx] + read_split(data, "unsup")[0]
    rng = np.random.default_rng(opts.seed + 17)
    split = [t.replace("<br />", " ").split() for t in sources]
    pool, p = [w for ws in split[:2000] for w in ws], (opts.p_window, opts.p_mask, opts.p_replace)
    return [augment(ws, pool, rng, *p) for _ in range(opts.copies) for ws in split]


def write_augmented(data: Path, out: Path, opts: AugmentOptions, device) -> dict:
    """The augmented transfer set (:func:`augmented_texts`), teacher-labelled, to ``out``; returns ``{"texts"}``."""
    texts = augmented_texts(data, opts)
    label_and_write(texts, opts, out, device)
    return {"texts": len(texts)}


def write_sentences(data: Path, out: Path, opts: SentenceOptions, device) -> dict:
    """The teacher-labelled sentences of the fitting train reviews to ``out``; returns ``{"sentences"}``."""
    texts, _, _, fit_idx = train_split(data, opts.seed)
    sentences = [s for i in fit_idx for s in review_sentences(texts[i])]
    label_and_write(sentences, opts, out, device)
    return {"sentences": len(sentences)}


def parse_spec(spec: str) -> tuple[str, int, int]:
    """``(path, repeat, sample)`` of ``PATH`` (1, 0), ``PATH:K`` (every row K times) or ``PATH%N`` (a seeded sample of
    N rows). Raises UsageError when N is not a whole number."""
    if ":" in spec and spec.rsplit(":", 1)[1].isdigit():
        return spec.rsplit(":", 1)[0], int(spec.rsplit(":", 1)[1]), 0
    if "%" not in spec:
        return spec, 1, 0
    if not (n := spec.rsplit("%", 1)[1]).isdigit():
        raise UsageError(f"augmented {spec}: N must be a whole number")
    return spec.rsplit("%", 1)[0], 1, int(n)


def teacher_logits(path: str, data: Path, val_idx: np.ndarray, val_y: np.ndarray,
                   unsup: bool = True) -> tuple[dict, dict]:
    """A teacher's review logits ``{"train": [N, 2], "unsup": [M, 2]}`` (``unsup`` False: [0, 2]), centred and divided
    by their standard deviation on the train split, and ``info`` (file, validation accuracy, scale). ``path`` is a
    split-ordered ``.npz``, a teacher folder holding ``logits.npz`` (:mod:`.finetune_hf`) or a teacher artifact whose
    logits are looked up by the texts of ``data`` (:mod:`.teacher_artifact`). FileNotFoundError when it is missing,
    MissingTextsError when the artifact lacks a review."""
    path = Path(path) / "logits.npz" if Path(path).is_dir() else Path(path)
    if is_artifact(path):
        artifact = TeacherArtifact.load(path)
        t = {"train": artifact.lookup(read_split(data, "train")[0]),
             "unsup": artifact.lookup(read_split(data, "unsup")[0]) if unsup else np.zeros((0, 2), np.float32)}
    else:
        t = np.load(path)
    z = {k: t[k] - t[k].mean(1, keepdims=True) for k in ("train", "unsup")}
    s = float(z["train"].std()) or 1.0
    acc = float((t["train"][val_idx].argmax(1) == val_y).mean())
    return {k: v / s for k, v in z.items()}, {"file": str(path), "validation_accuracy": acc, "scale": s}


def read_augmented(spec: str, seed: int = 0) -> tuple[list[str], list[list[float]], int]:
    """Rows of one transfer set: ``(texts, logits rows [negative, positive], rows read)``; ``spec`` as in
    :func:`parse_spec`, the sample seeded by ``seed``. Raises UsageError for a malformed spec, FileNotFoundError for
    a missing file."""
    path, repeat, sample = parse_spec(spec)
    rows = read_table(Path(path))
    texts, z = [r["text"] for r in rows], [r["logits"] for r in rows]
    if sample and sample < len(texts):
        keep = seeded_subset(len(texts), sample, seed)
        texts, z = [texts[i] for i in keep], [z[i] for i in keep]
    return texts * repeat, z * repeat, len(texts)


@dataclass
class ReviewOptions:
    """What a training stage reads: ``limit`` first fitting train reviews (0: all), ``no_unsup`` no unlabeled ones;
    ``seed`` (validation split, batches, init), autocast ``precision`` (auto, bf16, fp32), AdamW ``weight_decay``."""

    seed: int = 0
    precision: str = "auto"
    weight_decay: float = 0.01
    limit: int = 0
    no_unsup: bool = False


@dataclass(frozen=True)
class ReviewSplit:
    """Tokenized reviews: ``seqs`` (fitting train reviews, then ``n_unsup`` unlabeled ones; int64 id arrays),
    ``val_seqs`` and ``val_y`` (int64 [V]) of the validation split, ``train_labels`` (int64 [N]) and the index
    arrays into the train split used."""

    seqs: list
    val_seqs: list
    val_y: np.ndarray
    train_labels: np.ndarray
    fit_idx: np.ndarray
    n_unsup: int
    val_idx: np.ndarray


def review_split(data: Path, opts: ReviewOptions, encoder: TextEncoder) -> ReviewSplit:
    """The train split (fitting and validation parts) and the unlabeled reviews chosen by ``opts``, tokenized.
    Raises FileNotFoundError when a split file is missing."""
    train_texts, train_labels, val_idx, fit_idx = train_split(data, opts.seed)
    unsup_texts = [] if opts.no_unsup else read_split(data, "unsup")[0]
    if opts.limit:
        fit_idx = fit_idx[: opts.limit]
    print("tokenizing ...", file=sys.stderr)
    fit = [ids for ids, _ in encoder.encode_ids_batch([train_texts[i] for i in fit_idx])]
    unsup = [ids for ids, _ in encoder.encode_ids_batch(unsup_texts)]
    val = [ids for ids, _ in encoder.encode_ids_batch([train_texts[i] for i in val_idx])]
    return ReviewSplit(fit + unsup, val, train_labels[val_idx], train_labels, fit_idx, len(unsup), val_idx)


def transfer_set(opts, encoder: TextEncoder, num_classes: int, reviews: ReviewSplit,
                 data: Path) -> tuple[list, np.ndarray, dict]:
    """``(seqs, targets float32 [N, C], teacher_info)``: the reviews' and the ``opts.augmented`` texts' sequences,
    and softmax(z / T) of the ``opts.teacher`` logits (:func:`teacher_logits`; augmented logits centred and put on
    its scale), with an ``opts.gold_weight`` share of the one-hot label for the fitting train reviews. Raises
    ValueError when there is no teacher."""
    if not opts.teacher:
        raise ValueError("the distillation stage needs a teacher")
    z, teacher_info = teacher_logits(opts.teacher, data, reviews.val_idx, reviews.val_y, reviews.n_unsup > 0)
    T, fit_idx = opts.temperature, reviews.fit_idx
    p_fit = torch.softmax(torch.from_numpy(z["train"][fit_idx]) / T, -1).numpy()
    onehot = np.eye(num_classes, dtype=np.float32)[reviews.train_labels[fit_idx]]
    p_unsup = torch.softmax(torch.from_numpy(z["unsup"][: reviews.n_unsup]) / T, -1).numpy()
    targets = np.concatenate([opts.gold_weight * onehot + (1 - opts.gold_weight) * p_fit, p_unsup]).astype(np.float32)
    seqs = list(reviews.seqs)
    if opts.augmented:
        aug_texts, aug_z, files = [], [], []
        for spec in opts.augmented:
            texts, z_rows, used = read_augmented(spec, opts.seed)
            aug_texts += texts
            aug_z += z_rows
            files.append({"spec": spec, "texts": used})
        z_aug = np.asarray(aug_z, np.float32)
        z_aug = (z_aug - z_aug.mean(1, keepdims=True)) / teacher_info["scale"]
        seqs += [ids for ids, _ in encoder.encode_ids_batch(aug_texts)]
        targets = np.concatenate([targets, torch.softmax(torch.from_numpy(z_aug) / T, -1).numpy()])
        teacher_info["augmented"] = {"files": files, "texts": len(aug_texts)}
    return seqs, targets, teacher_info
