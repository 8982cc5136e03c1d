"""Train the bundled classifier on IMDB.

Usage::

    python -m model.training.train --data ../shared/data/imdb --out resources/model

Recipe (documented in ``resources/model/README.md``):

1. A WordPiece tokenizer trained on the train + unlabeled reviews.
2. Token embeddings initialised from skip-gram word vectors (word2vec,
   Mikolov et al. 2013, via ``gensim``) trained on the same 75,000 texts
   (unsupervised pre-training; ``--w2v-epochs 0`` turns it off).
3. The encoder is trained on the train split minus a seeded validation
   split (``--val-size`` reviews); the test split is used only once, at the
   end, for ``metrics.json``. Inputs up to ``--max-len`` tokens with head+tail
   truncation; length-bucketed batches; AdamW with linear warm-up and decay;
   label smoothing; an exponential moving average of the weights (Polyak
   averaging) that is kept when it validates better.
4. Optional, ``--distill-unsup N``: knowledge distillation (Hinton et al.
   2015) on unlabeled reviews. A TF-IDF 1-2-gram logistic regression (the
   reference bar of :mod:`model.training.baseline`) is fitted on the same training
   reviews (never the validation or test ones) and labels N seeded
   unlabeled reviews with its class probabilities; the encoder trains on
   the gold reviews (label-smoothed one-hot targets) and those reviews
   (soft targets) together, with one cross-entropy.
5. Optional, ``--init-from DIR``: start from a trained model folder (its
   config, weights and tokenizer) instead of from scratch, e.g. to add the
   distillation stage to the bundled model.

Checkpoints (safetensors + JSON, never pickle) are written to ``--work``
every ``--ckpt-minutes`` and at each epoch end; rerunning the same command
resumes from the newest one.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import shutil
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from model.core.config import EncoderConfig
from model.core.encoder import TransformerClassifier
from model.core.tokenizer import TextEncoder, load_tokenizer, train_tokenizer
from model.core.weights import CONFIG_FILE, METRICS_FILE, TOKENIZER_FILE, load_model, load_state, save_model, save_state

from .common import adamw, add_architecture_args, binary_f1, ema_update, length_bucketed_batches, lr_at, optimizer_step
from .data import read_jsonl_gz, sha256_file


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; see ``--help``."""
    p = argparse.ArgumentParser(description="Train the Attention Explorer IMDB classifier.")
    p.add_argument("--data", required=True, help="folder with train/test/unsup .jsonl.gz")
    p.add_argument("--out", required=True, help="model folder to write (weights, config, tokenizer, metrics)")
    p.add_argument("--work", default="runs/train", help="checkpoint folder (resumable)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--vocab-size", type=int, default=16000)
    p.add_argument("--max-len", type=int, default=512)
    add_architecture_args(p)
    p.add_argument("--pooling", choices=["mean", "cls"], default="mean")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--warmup-steps", type=int, default=300)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--ema-decay", type=float, default=0.999)
    p.add_argument("--val-size", type=int, default=1250)
    p.add_argument("--w2v-epochs", type=int, default=3, help="skip-gram epochs for embedding init; 0 = random init")
    p.add_argument("--init-from", default="",
                   help="start from this trained model folder (config, weights, tokenizer); use the --seed and "
                        "--val-size it was trained with, so that its validation reviews stay unseen")
    p.add_argument("--distill-unsup", type=int, default=0,
                   help="also train on N unlabeled reviews with a TF-IDF logistic-regression teacher's soft labels")
    p.add_argument("--teacher-C", type=float, default=10.0, help="inverse regularisation of the distillation teacher")
    p.add_argument("--ckpt-minutes", type=float, default=10.0)
    p.add_argument("--limit", type=int, default=0, help="use only N training reviews (smoke runs)")
    p.add_argument("--test-limit", type=int, default=0, help="evaluate on only N test reviews (smoke runs)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    return p.parse_args(argv)


def word2vec_init(encoder: TextEncoder, texts: list[str], d_model: int, epochs: int, seed: int) -> np.ndarray:
    """Skip-gram word vectors for every vocabulary entry, trained on ``texts``' word pieces.

    Returns:
        float32 [V, d_model] scaled so that each row has RMS 1/sqrt(d_model)
        (the scale of the default embedding init); rows of tokens never seen
        keep a random init.
    """
    from gensim.models import Word2Vec  # training-only dependency

    tok = encoder.tokenizer
    sentences = [e.tokens for e in tok.encode_batch(texts, add_special_tokens=False)]
    w2v = Word2Vec(
        sentences, vector_size=d_model, window=5, min_count=1, sg=1, negative=5,
        sample=1e-4, workers=2, epochs=epochs, seed=seed,
    )
    V = tok.get_vocab_size()
    rng = np.random.default_rng(seed)
    table = rng.normal(0.0, d_model**-0.5, size=(V, d_model)).astype(np.float32)
    vocab = tok.get_vocab()
    hit = 0
    for token, idx in vocab.items():
        if token in w2v.wv.key_to_index:
            table[idx] = w2v.wv[token]
            hit += 1
    seen = np.array([t in w2v.wv.key_to_index for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])])
    rms = np.sqrt((table[seen] ** 2).mean())
    table[seen] *= (d_model**-0.5) / rms
    table[0] = 0.0  # padding
    print(f"word2vec: {hit}/{V} vocabulary entries initialised", file=sys.stderr)
    return table


def to_batch(encoder: TextEncoder, encoded: list, idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad the encodings at ``idx``: -> (input_ids (B, T), mask (B, T))."""
    ids, mask = encoder.pad([encoded[i] for i in idx])
    return torch.from_numpy(ids), torch.from_numpy(mask)


@torch.inference_mode()
def predict_labels(model: TransformerClassifier, encoder: TextEncoder, encoded: list, batch_size: int = 64) -> np.ndarray:
    """Predicted class index for every encoding (length-sorted batches). Returns int64 [N]."""
    model.eval()
    lengths = np.array([len(e.ids) for e in encoded])
    order = np.argsort(lengths, kind="stable")
    out = np.empty(len(encoded), dtype=np.int64)
    for s in range(0, len(order), batch_size):
        idx = order[s : s + batch_size]
        ids, mask = to_batch(encoder, encoded, idx)
        logits, _ = model(ids, mask)
        out[idx] = logits.argmax(-1).numpy()
    return out


def _save_checkpoint(work: Path, model, ema, opt, meta: dict) -> None:
    tensors = {f"model.{k}": v for k, v in model.state_dict().items()}
    tensors.update({f"ema.{k}": v for k, v in ema.items()})
    names = [n for n, _ in model.named_parameters()]
    for i, (name, p) in enumerate(model.named_parameters()):
        st = opt.state.get(p)
        if st:
            tensors[f"opt.{name}.exp_avg"] = st["exp_avg"]
            tensors[f"opt.{name}.exp_avg_sq"] = st["exp_avg_sq"]
            meta.setdefault("opt_steps", {})[name] = float(st["step"])
    meta["param_names"] = names
    save_state(tensors, work / "checkpoint.safetensors", metadata=None)
    (work / "checkpoint.json").write_text(json.dumps(meta, indent=1))


def _load_checkpoint(work: Path, model, ema, opt) -> dict | None:
    if not (work / "checkpoint.json").is_file():
        return None
    meta = json.loads((work / "checkpoint.json").read_text())
    state = load_state(work / "checkpoint.safetensors")
    model.load_state_dict({k[6:]: v for k, v in state.items() if k.startswith("model.")})
    for k in ema:
        ema[k].copy_(state[f"ema.{k}"])
    for name, p in model.named_parameters():
        if f"opt.{name}.exp_avg" in state:
            opt.state[p] = {
                "step": torch.tensor(meta["opt_steps"][name]),
                "exp_avg": state[f"opt.{name}.exp_avg"].clone(),
                "exp_avg_sq": state[f"opt.{name}.exp_avg_sq"].clone(),
            }
    return meta


def distillation_set(
    args: argparse.Namespace,
    work: Path,
    fit_texts: list[str],
    fit_labels: np.ndarray,
    val_texts: list[str],
    val_labels: np.ndarray,
    unsup_texts: list[str],
) -> tuple[list[str], np.ndarray, dict]:
    """Unlabeled reviews with a teacher's soft labels, for knowledge distillation (Hinton et al. 2015).

    The teacher, TF-IDF 1-2-gram logistic regression (:func:`model.training.baseline.fit_tfidf_logreg`), is fitted on
    ``fit_texts`` only; its validation accuracy is reported, never used to choose anything. The
    probabilities are cached in ``work/teacher.safetensors`` so that a resumed run sees the same targets.

    Returns:
        ``(texts, probs, info)``: ``args.distill_unsup`` reviews (a seeded sample of ``unsup_texts``), float32
        [N, C] teacher probabilities, and a JSON-able summary.
    """
    pick = np.random.default_rng(args.seed + 1).permutation(len(unsup_texts))[: args.distill_unsup]
    texts = [unsup_texts[i] for i in pick]
    cache = work / "teacher.safetensors"
    info_path = work / "teacher.json"
    if cache.is_file() and info_path.is_file():
        return texts, load_state(cache)["probs"].numpy(), json.loads(info_path.read_text())
    from .baseline import fit_tfidf_logreg  # training-only dependency (scikit-learn)

    print(f"fitting the distillation teacher, labelling {len(texts)} unlabeled reviews ...", file=sys.stderr)
    t0 = time.time()
    predict_proba = fit_tfidf_logreg(fit_texts, fit_labels, args.teacher_C)
    probs = predict_proba(texts)
    info = {
        "teacher": "tfidf-1-2gram-logreg", "C": args.teacher_C, "unlabeled_reviews": len(texts),
        "teacher_val_accuracy": float((predict_proba(val_texts).argmax(-1) == val_labels).mean()),
        "teacher_positive_share": float((probs.argmax(-1) == 1).mean()), "teacher_s": time.time() - t0,
    }
    print(json.dumps(info), file=sys.stderr)
    save_state({"probs": torch.from_numpy(probs)}, cache)
    info_path.write_text(json.dumps(info, indent=1))
    return texts, probs, info


def main(argv: list[str] | None = None) -> int:
    """Run training; returns the process exit code."""
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    t_start = time.time()
    data, out, work = Path(args.data), Path(args.out), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)

    train_texts, train_labels = read_jsonl_gz(data / "train.jsonl.gz")
    unsup_texts, _ = read_jsonl_gz(data / "unsup.jsonl.gz")
    perm = rng.permutation(len(train_texts))
    val_idx, fit_idx = perm[: args.val_size], perm[args.val_size :]
    if args.limit:
        fit_idx = fit_idx[: args.limit]

    tok_path = work / TOKENIZER_FILE
    if args.init_from:
        init_dir = Path(args.init_from)
        model = load_model(init_dir)  # raises naming the file when something is missing or corrupt
        config = model.config
        if not tok_path.is_file():
            shutil.copyfile(init_dir / TOKENIZER_FILE, tok_path)
        tokenizer = load_tokenizer(tok_path)
    else:
        if not tok_path.is_file():
            print("training tokenizer ...", file=sys.stderr)
            train_tokenizer([train_texts[i] for i in fit_idx] + unsup_texts, vocab_size=args.vocab_size).save(str(tok_path))
        tokenizer = load_tokenizer(tok_path)
        config = EncoderConfig(
            vocab_size=tokenizer.get_vocab_size(), max_len=args.max_len, d_model=args.d_model, n_heads=args.n_heads,
            n_layers=args.n_layers, d_ff=args.d_ff, dropout=args.dropout, pooling=args.pooling,
        )
        model = TransformerClassifier(config)
    encoder = TextEncoder(tokenizer, config.max_len)

    w2v_path = work / "word2vec.safetensors"
    if args.w2v_epochs > 0 and not args.init_from:
        if not w2v_path.is_file():
            print("training word2vec embeddings ...", file=sys.stderr)
            table = word2vec_init(encoder, [train_texts[i] for i in fit_idx] + unsup_texts, config.d_model, args.w2v_epochs, args.seed)
            save_state({"embedding": torch.from_numpy(table)}, w2v_path)
        with torch.no_grad():
            model.token_embedding.weight.copy_(load_state(w2v_path)["embedding"])

    # Training targets as class distributions [N, C]: label-smoothed one-hot for gold reviews,
    # the teacher's probabilities for distilled unlabeled reviews.
    C, eps = config.num_classes, args.label_smoothing
    fit_texts = [train_texts[i] for i in fit_idx]
    targets = np.full((len(fit_idx), C), eps / C, dtype=np.float32)
    targets[np.arange(len(fit_idx)), train_labels[fit_idx]] += 1.0 - eps
    teacher_info = None
    if args.distill_unsup:
        distill_texts, teacher_probs, teacher_info = distillation_set(args, work, fit_texts, train_labels[fit_idx],
                                                                      [train_texts[i] for i in val_idx],
                                                                      train_labels[val_idx], unsup_texts)
        fit_texts += distill_texts
        targets = np.concatenate([targets, teacher_probs])

    print("tokenizing ...", file=sys.stderr)
    fit_enc = encoder.encode_batch(fit_texts)
    val_enc = encoder.encode_batch([train_texts[i] for i in val_idx])
    y_fit = torch.from_numpy(targets)  # (N, C) target distributions
    y_val = train_labels[val_idx]
    lengths = np.array([len(e.ids) for e in fit_enc])

    opt = adamw(model, args.lr, args.weight_decay, eps=1e-9)
    ema = {k: v.detach().clone() for k, v in model.state_dict().items()}
    steps_per_epoch = math.ceil(len(fit_enc) / args.batch_size)
    total_steps = steps_per_epoch * args.epochs
    meta = _load_checkpoint(work, model, ema, opt) or {"epoch": 0, "step_in_epoch": 0, "history": [], "train_s": 0.0}
    if meta["step_in_epoch"] or meta["epoch"]:
        print(f"resuming at epoch {meta['epoch'] + 1}, step {meta['step_in_epoch']}", file=sys.stderr)

    def snapshot(weights: dict) -> TransformerClassifier:
        m = TransformerClassifier(config)
        m.load_state_dict(weights)
        return m.eval()

    last_ckpt = time.time()
    for epoch in range(meta["epoch"], args.epochs):
        batches = length_bucketed_batches(lengths, args.batch_size, np.random.default_rng(args.seed * 1000 + epoch))
        model.train()
        t_epoch = time.time()
        losses = meta.pop("partial_losses", [])
        bar = tqdm(total=len(batches), initial=meta["step_in_epoch"], desc=f"epoch {epoch + 1}/{args.epochs}", file=sys.stderr, mininterval=5)
        for b in range(meta["step_in_epoch"], len(batches)):
            step = epoch * steps_per_epoch + b
            for g in opt.param_groups:
                g["lr"] = lr_at(step, total_steps, args.warmup_steps, args.lr)
            ids, mask = to_batch(encoder, fit_enc, batches[b])
            logits, _ = model(ids, mask)
            loss = F.cross_entropy(logits, y_fit[batches[b]])  # soft targets (label smoothing is in them)
            losses.append(optimizer_step(loss, opt, model.parameters()))
            ema_update(ema, model, step, args.ema_decay)
            bar.update(1)
            bar.set_postfix(loss=f"{np.mean(losses[-100:]):.4f}")
            if time.time() - last_ckpt > args.ckpt_minutes * 60:
                meta.update(epoch=epoch, step_in_epoch=b + 1, partial_losses=losses)
                meta["train_s"] += time.time() - t_epoch
                t_epoch = time.time()
                _save_checkpoint(work, model, ema, opt, meta)
                meta.pop("partial_losses")
                last_ckpt = time.time()
        bar.close()
        meta["train_s"] += time.time() - t_epoch
        acc_raw = float((predict_labels(model, encoder, val_enc) == y_val).mean())
        acc_ema = float((predict_labels(snapshot(ema), encoder, val_enc) == y_val).mean())
        meta["history"].append(
            {"epoch": epoch + 1, "train_loss": float(np.mean(losses)), "val_accuracy": acc_raw, "val_accuracy_ema": acc_ema}
        )
        print(json.dumps(meta["history"][-1]), file=sys.stderr)
        # keep the best validated weights of the run
        best = max(acc_raw, acc_ema)
        if best >= meta.get("best_val", -1):
            meta["best_val"] = best
            meta["best_source"] = f"epoch {epoch + 1} {'ema' if acc_ema >= acc_raw else 'raw'}"
            save_state(ema if acc_ema >= acc_raw else model.state_dict(), work / "best.safetensors")
        meta.update(epoch=epoch + 1, step_in_epoch=0)
        _save_checkpoint(work, model, ema, opt, meta)
        last_ckpt = time.time()

    # Final selection on the validation split only: the best validated snapshot, the
    # last epoch's EMA weights, and their uniform average (checkpoint averaging).
    best_w = load_state(work / "best.safetensors")
    candidates = {
        "best": best_w,
        "last_ema": ema,
        "average": {k: (best_w[k].float() + ema[k].float()) / 2 if best_w[k].dtype.is_floating_point else best_w[k]
                    for k in best_w},
    }
    if args.init_from:  # never ship something that validates worse than the starting point
        candidates["init"] = load_model(args.init_from).state_dict()
    selection = {}
    for name, weights in candidates.items():
        selection[name] = float((predict_labels(snapshot(weights), encoder, val_enc) == y_val).mean())
    chosen = max(selection, key=lambda n: (selection[n], n == "best"))
    print(f"validation accuracy of the final candidates: {selection}; chosen: {chosen}", file=sys.stderr)
    best_model = snapshot(candidates[chosen])
    save_model(best_model, out)
    shutil.copyfile(tok_path, out / TOKENIZER_FILE)

    print("evaluating on the test split ...", file=sys.stderr)
    test_texts, test_labels = read_jsonl_gz(data / "test.jsonl.gz")
    if args.test_limit:
        sel = np.random.default_rng(args.seed).permutation(len(test_texts))[: args.test_limit]
        test_texts, test_labels = [test_texts[i] for i in sel], test_labels[sel]
    t0 = time.time()
    test_pred = predict_labels(best_model, encoder, encoder.encode_batch(test_texts))
    test_s = time.time() - t0
    files = {n: sha256_file(data / n) for n in ("train.jsonl.gz", "test.jsonl.gz", "unsup.jsonl.gz")}
    metrics = {
        "test_accuracy": float((test_pred == test_labels).mean()),
        "test_f1": binary_f1(test_labels, test_pred),
        "test_count": len(test_labels),
        "test_reviews_per_s": len(test_labels) / test_s,
        "validation": {
            "size": len(val_idx), "best_epoch_accuracy": meta["best_val"], "best_epoch": meta["best_source"],
            "final_candidates": selection, "chosen": chosen,
        },
        "distillation": teacher_info,
        "epochs": meta["history"],
        "train_wall_s": meta["train_s"],
        "total_wall_s_this_run": time.time() - t_start,
        "hardware": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "torch_threads": torch.get_num_threads(),
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "torch": torch.__version__,
        },
        "data_sha256": files,
        "hyperparameters": {**vars(args), "config": asdict(config)},
        "num_parameters": sum(p.numel() for p in best_model.parameters()),
    }
    (out / METRICS_FILE).write_text(json.dumps(metrics, indent=2) + "\n")
    print(json.dumps({k: metrics[k] for k in ("test_accuracy", "test_f1", "test_count")}))
    assert (out / CONFIG_FILE).is_file()
    return 0


if __name__ == "__main__":
    sys.exit(main())
