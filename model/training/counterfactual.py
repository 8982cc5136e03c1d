"""Counterfactual negations of real review sentences: the pipeline's ``negations`` stage (:func:`write_negations`).

The teacher reads "not bad" as negative (mostly faint praise inside negative IMDB reviews), so distillation alone
cannot teach it; counterfactual data (Kaushik et al. 2020), made here by rule on sentences of the fitting reviews, can:

1. :func:`polarity_lexicon`: the log-count ratio r(w) = log((p_w + 1) / (n_pos + 1)) - log((q_w + 1) / (n_neg + 1))
   of the positive and negative reviews containing w (Wang & Manning 2012); ``|r| >= min_ratio`` in at least
   ``min_count`` reviews is polar; the behavioural tests' words (:mod:`model.datasets.behaviour`) are left out.
2. :func:`negate`: a sentence qualifies with no negation, no contrast word, at most ``max_words`` words and one
   copula followed (after an optional intensifier) by its only polar word, when the teacher agrees with that word
   with a logit margin of at least ``min_margin`` ("The ending was pointless."); "not" goes after the copula.
3. :func:`counterfactuals`: the target is the teacher's logits flipped and scaled by ``flip_scale``; both
   directions are kept in equal numbers, so that "not" alone carries no label.

Output rows: ``{"text", "logits": [negative, positive], "source", "word"}`` (a transfer set, :mod:`.transfer`).
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model.datasets.behaviour import DEV_NEGATIVE, DEV_POSITIVE, NEGATIVE, POSITIVE
from model.datasets.splits import train_split
from model.datasets.task_data import read_table

from .common import write_rows

COPULAS = ("is", "was", "are", "were")  # auxiliaries: "not" goes right after them ("felt not X" is not English)
INTENSIFIERS = ("very", "really", "so", "quite", "too", "pretty", "particularly", "especially", "terribly",
                "incredibly", "extremely", "totally", "completely", "just", "truly", "simply", "rather",
                "genuinely", "utterly", "absolutely", "fairly", "that")
_NEGATION = re.compile(r"\b(?:not|no|never|nothing|nobody|none|neither|nor|hardly|barely|without)\b|n't\b",
                       re.IGNORECASE)
_CONTRAST = re.compile(r"\b(?:but|although|though|however|yet|despite|except|while|whereas)\b", re.IGNORECASE)
#: Words never negated: the behavioural tests' own words (kept out so those tests measure generalisation; they
#: still count as polar when a sentence is checked for a single polar word), and words whose negation is not
#: the opposite statement ("was supposed to", "was okay").
_TEST_WORDS = frozenset(w.lower() for w in POSITIVE + NEGATIVE + DEV_POSITIVE + DEV_NEGATIVE)
_NOT_FLIPPABLE = frozenset({"supposed", "ok", "okay", "alright", "fine", "plain", "nominated", "only", "even"})
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_COPULA_PHRASE = re.compile(rf"\b({'|'.join(COPULAS)})\s+((?:{'|'.join(INTENSIFIERS)})\s+)?([A-Za-z]+)\b",
                            re.IGNORECASE)


def polarity_lexicon(texts: list[str], labels: np.ndarray, min_count: int = 40, min_ratio: float = 1.0,
                     exclude: set[str] | frozenset[str] = frozenset()) -> dict[str, int]:
    """Polar words ``{word: +1 | -1}`` of N reviews with int [N] ``labels`` (1 positive, 0 negative): in at least
    ``min_count`` reviews, absolute log-count ratio (natural log) at least ``min_ratio``, not in ``exclude``."""
    counts = (collections.Counter(), collections.Counter())
    for text, y in zip(texts, labels):
        counts[int(y)].update(set(_WORD.findall(text.lower().replace("<br />", " "))))
    n_neg, n_pos = int((labels == 0).sum()), int((labels == 1).sum())
    out = {}
    for w in set(counts[0]) | set(counts[1]):
        q, p = counts[0][w], counts[1][w]
        if p + q < min_count or w in exclude:
            continue
        r = np.log((p + 1) / (n_pos + 1)) - np.log((q + 1) / (n_neg + 1))
        if abs(r) >= min_ratio:
            out[w] = 1 if r > 0 else -1
    return out


def negate(text: str, lexicon: dict[str, int]) -> tuple[str, int, str] | None:
    """``(counterfactual text, polarity of the negated word, the word)``, or None when the sentence does not qualify:
    no negation or contrast word, exactly one copula phrase whose word is in ``lexicon`` and no other polar word."""
    if _NEGATION.search(text) or _CONTRAST.search(text):
        return None
    hits = [m for m in _COPULA_PHRASE.finditer(text) if m.group(3).lower() in lexicon]
    if len(hits) != 1:
        return None
    m = hits[0]
    polar = [w for w in _WORD.findall(text.lower()) if w in lexicon or w in _TEST_WORDS]
    word = m.group(3).lower()
    if polar != [word]:
        return None
    return text[: m.end(1)] + " not" + text[m.end(1):], lexicon[word], word


def counterfactuals(rows: list[dict], lexicon: dict[str, int], max_words: int = 25, min_margin: float = 2.0,
                    flip_scale: float = 0.5, seed: int = 0) -> tuple[list[dict], dict]:
    """``(rows, info)``: counterfactuals ``{"text", "logits", "source", "word"}`` of teacher-labelled ``rows``
    (``{"text", "logits": [negative, positive]}``) with a :func:`polarity_lexicon`, as many per direction (a seeded
    sample of the larger side); ``info`` counts the candidates and the most negated words."""
    found: dict[int, list[dict]] = {1: [], -1: []}
    for row in rows:
        text, z = row["text"], row["logits"]
        if len(text.split()) > max_words:
            continue
        margin = z[1] - z[0]
        if abs(margin) < min_margin:
            continue
        hit = negate(text, lexicon)
        if hit is None or (margin > 0) != (hit[1] > 0):
            continue
        found[hit[1]].append({"text": hit[0], "logits": [-flip_scale * z[0], -flip_scale * z[1]], "source": text,
                              "word": hit[2]})
    n = min(len(found[1]), len(found[-1]))
    rng = np.random.default_rng(seed)
    out = []
    for polarity in (1, -1):
        keep = rng.permutation(len(found[polarity]))[:n]
        out += [found[polarity][i] for i in sorted(keep)]
    words = collections.Counter(r["word"] for r in out)
    info = {"candidates_negated_positive": len(found[1]), "candidates_negated_negative": len(found[-1]),
            "kept_per_direction": n, "top_words": words.most_common(40)}
    return out, info


@dataclass
class NegationOptions:
    """Options of the ``negations`` stage: ``sentences`` (a transfer set of :mod:`.transfer` or its stage) and the
    thresholds of :func:`polarity_lexicon` and :func:`counterfactuals`."""

    sentences: str = ""
    seed: int = 0
    min_count: int = 40
    min_ratio: float = 1.0
    max_words: int = 25
    min_margin: float = 2.0
    flip_scale: float = 0.5


def write_negations(data: Path, out: Path, opts: NegationOptions, device=None) -> dict:
    """The counterfactual negations of ``opts.sentences`` to ``out`` (lexicon from the fitting train reviews of
    ``data``); returns the counts (:func:`counterfactuals` info, ``lexicon_size``, ``written``)."""
    texts, labels, _, fit_idx = train_split(data, opts.seed)
    exclude = _TEST_WORDS | _NOT_FLIPPABLE
    lexicon = polarity_lexicon([texts[i] for i in fit_idx], labels[fit_idx], opts.min_count, opts.min_ratio, exclude)
    rows = read_table(Path(opts.sentences))
    kept, info = counterfactuals(rows, lexicon, opts.max_words, opts.min_margin, opts.flip_scale, opts.seed)
    write_rows(kept, out)
    info.update(lexicon_size=len(lexicon), sentences=len(rows), written=len(kept))
    return info
