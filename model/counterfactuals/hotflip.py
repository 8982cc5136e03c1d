"""``hotflip`` (Ebrahimi et al. 2018, "HotFlip: White-Box Adversarial Examples for Text Classification", section 3;
LIT's HotFlip): substitute one or two whole-word tokens by words of the model's own vocabulary, chosen by the
gradient.

For the input embeddings x (``model.embed(ids)``: linear in the one-hot token, for the bundled model and every
Hugging Face encoder the backend opens) and f = direction x the explained score of the verdict's output
(:func:`model.explain.gradients.target_score`: a class's log-odds, a label's logit, the value; direction from
:func:`~.guided.aim`), the first-order change of f when token i becomes vocabulary word w is
(e_w - e_{x_i}) . df/dx_i (the paper's eq. 2 with the embedding in place of the one-hot vector). The
``settings.candidates`` substitutions with the most negative change (at most a quarter of them at one position; among
the :data:`MAX_POSITIONS` words of the largest gradients) are made in the text (whole words of one piece,
letters only, the word's case kept), scored in one batch, and the flip among them (or, for two tokens, the closest
to flipping) is kept; the second token is chosen the same way on the text with the first substitution made. The edit
reported is the first flip (one token before two), or the candidate closest to flipping.
"""

from __future__ import annotations

import weakref

import numpy as np
import torch

from model.explain.gradients import target_score
from model.explain.heads import head_mask_hooks
from model.records.counterfactual import Change, Edit
from model.text.segments import one_text_inputs

from .base import Generator, Source, keep_case, word_spans
from .guided import aim, closest, score_candidates, side_tokens, task_of, token_words

_VOCAB: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
MAX_POSITIONS = 64
"""Substitutions are looked for at the words of the largest gradients (norm of df/dx_i), at most this many."""


def vocabulary(predictor) -> tuple[np.ndarray, list[str], torch.Tensor]:
    """``(int64 [V'] candidate ids, their V' words, float32 (V', E) their input embeddings)``: the vocabulary's
    whole-word pieces of two letters or more (WordPiece pieces without ``##``; byte-level and SentencePiece pieces
    with their word-start mark, the mark dropped); computed once per model."""
    model = predictor.model
    if model in _VOCAB:
        return _VOCAB[model]
    tok = predictor.encoder.tokenizer
    vocab = tok.get_vocab()
    ids = np.array(sorted(vocab.values()), dtype=np.int64)
    starts = predictor.encoder.word_starts(ids)
    names = {i: t for t, i in vocab.items()}
    keep, words = [], []
    for i, start in zip(ids.tolist(), starts.tolist()):
        word = names[i].lstrip("\u0120\u2581")
        if start and len(word) > 1 and word.isalpha() and word.isascii():
            keep.append(i)
            words.append(word)
    keep_ids = np.asarray(keep, dtype=np.int64)
    with predictor.forward_lock, torch.no_grad():  # not inference_mode: the table meets autograd's tensors later
        table = model.embed(torch.from_numpy(keep_ids).to(predictor.device).unsqueeze(1))[:, 0].float()
    _VOCAB[model] = (keep_ids, words, table)
    return _VOCAB[model]


def substitutions(source: Source, text: str, pair: str | None, frozen: tuple[int, int] | None) -> list[Change]:
    """The ``settings.candidates`` best single-word substitutions of the edited side of ``(text, pair)`` by the
    first-order change (see the module docstring), most negative first, as changes of that side; the word at the
    span ``frozen`` is left alone."""
    p, side = source.predictor, source.settings.side
    enc = p.encode(text, pair) if pair is not None else p.encode(text)
    edited = pair if side == "second" else text
    spans = word_spans(edited)
    words = token_words(enc, side_tokens(source, enc), spans)
    positions = [t for t, w in enumerate(words) if w >= 0 and tuple(enc.offsets[t]) == spans[w]
                 and edited[spans[w][0]:spans[w][1]].isalpha() and spans[w] != frozen]
    if not positions:
        return []
    cand_ids, cand_words, table = vocabulary(p)
    target, direction = aim(source)
    ids, mask, types = one_text_inputs(p, enc)
    opts = source.options if source.options is not None else p.options()
    model = p.model
    with p.forward_lock, head_mask_hooks(model, opts.head_mask, p.config.n_heads), \
            torch.inference_mode(False), torch.enable_grad():
        x = model.embed(ids).detach().requires_grad_(True)  # (1, T, E)
        logits, _ = model.encode(x, mask, **types)
        f = direction * target_score(logits, target, task_of(source).kind).sum()
        (grad,) = torch.autograd.grad(f, x)
    source.spent += 2
    if len(positions) > MAX_POSITIONS:  # the positions of the largest gradients
        norms = grad[0, positions].float().norm(dim=-1)
        positions = [positions[i] for i in sorted(torch.topk(norms, MAX_POSITIONS).indices.tolist())]
    g = grad[0, positions].float()  # (P, E)
    own = (g * x[0, positions].detach().float()).sum(-1, keepdim=True)  # (P, 1): g_i . e_{x_i}
    change = g @ table.T - own  # (P, V')
    same = torch.from_numpy(cand_ids).to(change.device)[None, :] == ids[0, positions][:, None]
    change = change.masked_fill(same, float("inf"))
    k = source.settings.candidates
    per = min(max(2, k // 4), change.shape[1])  # at most k/4 candidates per position: several words are tried
    top, cols = torch.topk(change, per, dim=1, largest=False)  # (P, per)
    best = torch.topk(top.flatten(), min(k, top.numel()), largest=False).indices.cpu().numpy()
    out = []
    for flat in best:
        row, j = divmod(int(flat), per)
        col = int(cols[row, j])
        s, e = spans[int(words[positions[row]])]
        out.append(Change(s, e, keep_case(edited[s:e], cand_words[col])))
    return out


def _shifted(change: Change, by: Change) -> Change:
    """``change`` (a span of the text after ``by`` was made) as a span of the text before it."""
    if change.start >= by.start + len(by.new):
        shift = len(by.new) - (by.end - by.start)
        return Change(change.start - shift, change.end - shift, change.new)
    return change


class HotFlip(Generator):
    """See the module docstring; one edit per input (none when no word can be substituted)."""

    name = "hotflip"
    title = "HotFlip"
    guided = True

    def _edits(self, source: Source, changes: list[list[Change]]) -> list[Edit]:
        text = source.side_text
        return [source.edit(self.name, cs, ", ".join(f"{text[c.start:c.end]} -> {c.new}" for c in cs), len(cs))
                for cs in changes]

    def generate(self, source: Source) -> list[Edit]:
        firsts = substitutions(source, source.text, source.text_pair, None)
        scored = score_candidates(source, self._edits(source, [[c] for c in firsts]))
        best = closest(source, scored)
        if best is None or best.flipped or source.settings.max_flips < 2:
            return [best] if best is not None else []
        first = best.changes[0]
        frozen = (first.start, first.start + len(first.new))
        seconds = substitutions(source, best.edited_text, best.edited_pair, frozen)
        pairs = [sorted([first, _shifted(c, first)], key=lambda c: c.start) for c in seconds]
        return [closest(source, [best, *score_candidates(source, self._edits(source, pairs))])]


__all__ = ["MAX_POSITIONS", "HotFlip", "substitutions", "vocabulary"]
