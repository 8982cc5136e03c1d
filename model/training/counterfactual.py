"""Counterfactual negation of real review sentences, for teaching the student what "not" does to a polar word.

Usage::

    python -m model.training.counterfactual --data ../shared/data/imdb --sentences sentences.jsonl.gz \
        --out negations.jsonl.gz

Why: the teacher (a MiniLM fine-tuned on IMDB reviews) reads "not bad" as negative, because in IMDB reviews
the phrase is mostly faint praise inside negative reviews ("The actors are not bad, not good either."), so
distillation alone cannot teach that a negated negative word turns a statement positive. Counterfactually
augmented data (Kaushik et al. 2020, "Learning the Difference that Makes a Difference with
Counterfactually-Augmented Data", ICLR) teaches it with minimal edits of real texts whose label flips.
Here the edit is made by rule, on real sentences of the *fitting* training reviews (never validation or
test reviews):

1. A polarity lexicon is measured from the fitting reviews: the log-count ratio
   r(w) = log((p_w + 1) / (n_pos + 1)) - log((q_w + 1) / (n_neg + 1)) of the share of positive and negative
   reviews containing w (Wang & Manning 2012); words with ``|r| >= --min-ratio`` in at least ``--min-count``
   reviews are polar. The word lists of the behavioural tests (:mod:`model.checklist`, both the reported and
   the development set) are removed from it, so that those tests measure generalisation to words the
   augmentation never negated.
2. A sentence qualifies when it has no negation yet, no contrast word, at most ``--max-words`` words, one
   copula followed (after an optional intensifier) by a polar word, and the teacher's label agrees with
   that word's polarity with a logit margin of at least ``--min-margin``: "The ending was pointless." with
   the teacher confidently negative.
3. The counterfactual inserts "not" after the copula ("The ending was not pointless.") and its target is
   the teacher's logits flipped and scaled by ``--flip-scale`` (0.5: a negated statement is weaker than the
   opposite statement). Both directions are kept (a negated positive word becomes negative), in equal
   numbers, so that "not" alone carries no label.

Output: one JSON line per counterfactual, ``{"text": str, "logits": [float, float], "source": str, "word": str}``, the
format ``python -m model.training.distill --augmented`` reads. None of the behavioural test sentences is
used. Training-side code only.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

from ..checklist import DEV_NEGATIVE, DEV_POSITIVE, NEGATIVE, POSITIVE
from .common import train_split

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
_COPULA_PHRASE = re.compile(rf"\b({'|'.join(COPULAS)})\s+((?:{'|'.join(INTENSIFIERS)})\s+)?([A-Za-z]+)\b", re.IGNORECASE)


def polarity_lexicon(texts: list[str], labels: np.ndarray, min_count: int = 40, min_ratio: float = 1.0,
                     exclude: set[str] | frozenset[str] = frozenset()) -> dict[str, int]:
    """Polar words measured from labelled reviews: ``{word: +1 | -1}``.

    Args:
        texts: N reviews; labels: (N,) int array, 1 positive, 0 negative.
        min_count: the fewest reviews a word must occur in.
        min_ratio: the least absolute log-count ratio (natural log; Wang & Manning 2012, section 2.1).
        exclude: words never returned (lowercase).
    """
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
    """``(counterfactual text, polarity of the negated word, the word)``, or None when the sentence does not qualify.

    Qualifies: no negation and no contrast word anywhere, exactly one copula phrase whose word (after an
    optional intensifier) is in ``lexicon``, and no other word of the sentence in ``lexicon`` (so that the
    negated word alone carries the sentence's polarity). "not" is inserted right after the copula.
    """
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
    """Counterfactual rows from teacher-labelled sentences, balanced between the two directions.

    Args:
        rows: ``{"text", "logits": [negative, positive]}`` dicts (:mod:`model.training.sentences` output).
        lexicon: :func:`polarity_lexicon` output.

    Returns:
        ``(rows, info)``: rows ``{"text", "logits", "source", "word"}``; info counts and the most negated words.
    """
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


#: How two clauses are joined; in each, the second clause decides the label. Not the behavioural tests'
#: templates ("I expected it to be X, but it was Y."): real sentences, joined.
CONTRAST_FORMS = ("{a}, but {b}", "{a}, but {b}", "Although {a_lower}, {b}", "{a}; however, {b}")


_LOWERABLE = frozenset(["the", "this", "that", "these", "those", "it", "its", "a", "an", "his", "her", "their", "there", "he", "she", "they", "we", "you", "my", "our"])


def _clause(text: str) -> str:
    return text.strip().rstrip(".!?;,: ").strip()


def _lower_start(clause: str) -> str:
    """The clause with its first letter lower-cased when its first word is a determiner or pronoun ("The plot"
    -> "the plot"); names and "I" keep their capital."""
    first = clause.split(" ", 1)[0]
    return clause[:1].lower() + clause[1:] if first.lower() in _LOWERABLE else clause


def contrast_pairs(rows: list[dict], n: int, seed: int = 0) -> list[dict]:
    """Contrast counterfactuals: two real sentences of opposite polarity joined by a contrast ("A, but B.",
    "Although a, B.", "A; however, B."), labelled with the second sentence's logits.

    Args:
        rows: ``{"text", "logits": [negative, positive]}`` single-polarity sentences (for example the
            ``source`` sentences of :func:`counterfactuals` with the teacher's logits).
        n: pairs to write, half ending positive and half ending negative (fewer when the rows run out).

    Returns:
        rows ``{"text", "logits", "first", "second"}``; ``logits`` are the second sentence's.
    """
    rng = np.random.default_rng(seed)
    by_sign = {s: [r for r in rows if (r["logits"][1] > r["logits"][0]) == (s > 0)] for s in (1, -1)}
    out = []
    for s in (1, -1):  # s: polarity of the deciding (second) clause
        second, first = by_sign[s], by_sign[-s]
        if not second or not first:
            continue
        for i in range(n // 2):
            a, b = first[rng.integers(len(first))], second[rng.integers(len(second))]
            form = CONTRAST_FORMS[rng.integers(len(CONTRAST_FORMS))]
            clause_a, clause_b = _clause(a["text"]), _clause(b["text"])
            text = form.format(a=clause_a, a_lower=_lower_start(clause_a), b=_lower_start(clause_b)) + "."
            out.append({"text": text, "logits": list(b["logits"]), "first": a["text"], "second": b["text"]})
    return out


def write_rows(rows: list[dict], path: str | Path) -> None:
    """Write ``rows`` as gzipped JSON lines to ``path`` (folders created)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Write the counterfactual sentences; returns the exit code."""
    p = argparse.ArgumentParser(description="Counterfactual negations of teacher-labelled review sentences.")
    p.add_argument("--data", help="IMDB folder (the fitting train reviews give the lexicon); not needed with --contrast-from")
    p.add_argument("--sentences", help="model.training.sentences output (.jsonl.gz)")
    p.add_argument("--out", required=True, help=".jsonl.gz to write")
    p.add_argument("--contrast-from", help="instead of negations: write --contrast contrast counterfactuals built "
                   "from the source sentences of this negation file (its logits are the flipped teacher's, "
                   "--flip-scale 1.0)")
    p.add_argument("--contrast", type=int, default=1780, help="how many contrast counterfactuals")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--min-count", type=int, default=40)
    p.add_argument("--min-ratio", type=float, default=1.0)
    p.add_argument("--max-words", type=int, default=25)
    p.add_argument("--min-margin", type=float, default=2.0)
    p.add_argument("--flip-scale", type=float, default=0.5)
    args = p.parse_args(argv)
    t0 = time.time()
    if args.contrast_from:
        with gzip.open(args.contrast_from, "rt", encoding="utf-8") as fh:
            sources = [json.loads(line) for line in fh]
        rows = [{"text": r["source"], "logits": [-z for z in r["logits"]]} for r in sources]
        out = contrast_pairs(rows, args.contrast, args.seed)
        write_rows(out, args.out)
        print(json.dumps({"sources": len(rows), "written": len(out), "wall_s": time.time() - t0}))
        return 0
    if not (args.sentences and args.data):
        p.error("--data and --sentences are required (or --contrast-from)")
    texts, labels, _, fit_idx = train_split(args.data, args.seed)
    exclude = _TEST_WORDS | _NOT_FLIPPABLE
    lexicon = polarity_lexicon([texts[i] for i in fit_idx], labels[fit_idx], args.min_count, args.min_ratio, exclude)
    with gzip.open(args.sentences, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    out, info = counterfactuals(rows, lexicon, args.max_words, args.min_margin, args.flip_scale, args.seed)
    write_rows(out, args.out)
    info.update(lexicon_size=len(lexicon), sentences=len(rows), written=len(out), wall_s=time.time() - t0)
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
