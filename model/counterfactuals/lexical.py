"""The generators that do not read the model: ``word_replacer`` (LIT's WordReplacer), ``negation`` (CheckList's
negation tests) and ``scrambler`` (LIT's Scrambler). Each edits whole words (:func:`model.counterfactuals.base.
word_spans`) and keeps their case.
"""

from __future__ import annotations

import random
import re
import zlib

from model.records.counterfactual import Change, Edit

from .base import Generator, Source, keep_case, word_spans

BUILTIN_RULES_TEXT = """\
good -> bad, bad -> good, great -> terrible, terrible -> great, excellent -> awful, awful -> excellent,
best -> worst, worst -> best, love -> hate, hate -> love, loved -> hated, hated -> loved,
like -> dislike, liked -> disliked, enjoy -> dislike, enjoyed -> disliked, wonderful -> dreadful,
dreadful -> wonderful, amazing -> boring, boring -> amazing, brilliant -> dull, dull -> brilliant,
beautiful -> ugly, ugly -> beautiful, fun -> tedious, funny -> unfunny, perfect -> flawed, fantastic -> horrible,
horrible -> fantastic, masterpiece -> disaster, disaster -> masterpiece, poor -> fine, waste -> gift,
worse -> better, better -> worse, positive -> negative, negative -> positive,
very -> slightly, extremely -> mildly, really -> barely, highly -> hardly, truly -> hardly, absolutely -> somewhat,
slightly -> very, somewhat -> extremely"""
"""The built-in rules of ``word_replacer`` (sentiment antonyms, and intensifiers against downtoners), in the rule
syntax of :func:`parse_rules`: shown to the user, who may edit them."""

_RULE = re.compile(r"^\s*([^\W_]+(?:['\u2019][^\W_]+)*)\s*->\s*([^\W_]*(?:['\u2019 ][^\W_]+)*)\s*$")


def parse_rules(text: str) -> tuple[tuple[str, str], ...]:
    """``"good -> bad, great -> awful"`` (commas or new lines between rules) as ``(("good", "bad"), ("great",
    "awful"))``; the source words lower-cased (matched whatever their case). Raises ValueError naming the first rule
    that is not ``word -> replacement`` (one word on the left; the replacement may be words or empty)."""
    rules = []
    for part in re.split(r"[,\n]", text):
        if not part.strip():
            continue
        m = _RULE.match(part)
        if m is None:
            raise ValueError(f"word rule {part.strip()!r} is not 'word -> replacement'")
        rules.append((m.group(1).lower(), m.group(2)))
    return tuple(rules)


BUILTIN_RULES = parse_rules(BUILTIN_RULES_TEXT)


class WordReplacer(Generator):
    """One edit per rule whose word occurs (whole words, any case): every occurrence replaced, in the case of the
    occurrence; at most ``settings.max_edits`` edits, in the order of the words' first occurrence."""

    name = "word_replacer"
    title = "Word replacer"

    def generate(self, source: Source) -> list[Edit]:
        text = source.side_text
        rules = dict(source.settings.rules or BUILTIN_RULES)
        found: dict[str, list[tuple[int, int]]] = {}
        for s, e in word_spans(text):
            if text[s:e].lower() in rules:
                found.setdefault(text[s:e].lower(), []).append((s, e))
        edits = []
        for word, spans in list(found.items())[:source.settings.max_edits]:
            new = rules[word]
            changes = [Change(s, e, keep_case(text[s:e], new)) for s, e in spans]
            edits.append(source.edit(self.name, changes, f"{word} -> {new}", len(spans)))
        return edits


_AUX = ("is", "are", "was", "were", "am", "has", "have", "had", "will", "would", "could", "should", "must", "might")
_CONTRACTED = {"isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were", "hasn't": "has", "haven't": "have",
               "hadn't": "had", "won't": "will", "wouldn't": "would", "can't": "can", "couldn't": "could",
               "shouldn't": "should", "mustn't": "must", "cannot": "can"}
_PRONOUNS = frozenset(("i", "you", "he", "she", "it", "we", "they", "there"))
_PARTICIPLES = frozenset(("been", "done", "gone", "seen", "made", "had", "got", "given", "taken", "found", "heard",
                          "told", "known", "shown", "become", "come", "left", "felt", "kept", "brought", "thought"))
_HAVE = frozenset(("has", "have", "had"))
_NEGATORS = frozenset(("never", "no", "not", "nor", "hardly", "barely", "neither"))
_DO = {"don't": "", "doesn't": "s", "didn't": "ed", "do": "", "does": "s", "did": "ed"}
_IRREGULAR = {"be": ("is", "was"), "have": ("has", "had"), "do": ("does", "did"), "go": ("goes", "went"),
              "get": ("gets", "got"), "make": ("makes", "made"), "see": ("sees", "saw"), "think": ("thinks", "thought"),
              "find": ("finds", "found"), "feel": ("feels", "felt"), "buy": ("buys", "bought"),
              "take": ("takes", "took"), "give": ("gives", "gave"), "come": ("comes", "came"), "say": ("says", "said"),
              "know": ("knows", "knew"), "understand": ("understands", "understood"), "keep": ("keeps", "kept"),
              "hold": ("holds", "held"), "stand": ("stands", "stood"), "bring": ("brings", "brought"),
              "work": ("works", "worked"), "let": ("lets", "let"), "hit": ("hits", "hit"), "put": ("puts", "put")}


def inflect(verb: str, ending: str) -> str:
    """``verb`` (a base form) in the form a removed "do" asked for: ``""`` (base), ``"s"`` (third person) or ``"ed"``
    (past), by a table of irregular verbs, then the regular English rules."""
    low = verb.lower()
    if not ending:
        return verb
    if low in _IRREGULAR:
        return keep_case(verb, _IRREGULAR[low][0 if ending == "s" else 1])
    if ending == "s":
        tail = "es" if re.search(r"(s|x|z|ch|sh|o)$", low) else "s"
        return verb[:-1] + "ies" if re.search(r"[^aeiou]y$", low) else verb + tail
    if low.endswith("e"):
        return verb + "d"
    return verb[:-1] + "ied" if re.search(r"[^aeiou]y$", low) else verb + "ed"


def _negatable(words: list[str], i: int) -> bool:
    """Whether "not" may follow the auxiliary ``words[i]``: not after a negator ("never have I"), not before a
    pronoun (an inverted question, "is it"), and "has/have/had" only before a past participle (not "have a dog")."""
    nxt = words[i + 1] if i + 1 < len(words) else ""
    if not nxt or nxt in _NEGATORS or nxt in _PRONOUNS or (i > 0 and words[i - 1] in _NEGATORS):
        return False
    return words[i] not in _HAVE or nxt in _PARTICIPLES or nxt.endswith(("ed", "en"))


def negation_sites(text: str) -> list[tuple[list[Change], str]]:
    """Each place where a negation can be added or removed, as ``(changes, note)``, in text order: an auxiliary
    ("is", "was", "will", ...) not already negated gets "not" after it ("can" becomes "cannot"); a negated one
    ("isn't", "is not", "won't", "cannot") loses it; "don't / doesn't / didn't / do not / does not / did not" before a
    verb become the verb ("didn't like" -> "liked")."""
    spans = word_spans(text)
    words = [text[s:e].lower().replace("\u2019", "'") for s, e in spans]
    sites = []
    for i, (s, e) in enumerate(spans):
        w, nxt = words[i], (words[i + 1] if i + 1 < len(words) else "")
        nxt_span = spans[i + 1] if i + 1 < len(spans) else None
        if w in _DO and (w.endswith("n't") or nxt == "not"):
            k = i + 1 if w.endswith("n't") else i + 2
            if k < len(spans) and words[k].isalpha():
                vs, ve = spans[k]
                verb = inflect(text[vs:ve], _DO[w])
                sites.append(([Change(s, vs, ""), Change(vs, ve, keep_case(text[s:e], verb))],
                              f"{text[s:ve]} -> {verb}"))
        elif w in _CONTRACTED:
            sites.append(([Change(s, e, keep_case(text[s:e], _CONTRACTED[w]))], f"{text[s:e]} -> {_CONTRACTED[w]}"))
        elif w in _AUX + ("can",) and nxt == "not" and nxt_span is not None:
            sites.append(([Change(e, nxt_span[1], "")], f"{text[s:nxt_span[1]]} -> {text[s:e]}"))
        elif w in _AUX and _negatable(words, i):
            sites.append(([Change(e, e, " not")], f"{text[s:e]} -> {text[s:e]} not"))
        elif w == "can" and nxt not in ("not", "never"):
            sites.append(([Change(s, e, keep_case(text[s:e], "cannot"))], f"{text[s:e]} -> cannot"))
    return sites


class Negation(Generator):
    """One edit per negation site (:func:`negation_sites`), at most ``settings.max_edits``, in text order."""

    name = "negation"
    title = "Negation"

    def generate(self, source: Source) -> list[Edit]:
        sites = negation_sites(source.side_text)[:source.settings.max_edits]
        return [source.edit(self.name, changes, note, 1) for changes, note in sites]


class Scrambler(Generator):
    """Shuffles the words (punctuation and spaces stay where they are): ``settings.samples`` shuffles per input,
    seeded by ``settings.seed`` and the text (the same input gives the same shuffles); a control for word order.
    An input of fewer than two different words gives no edit."""

    name = "scrambler"
    title = "Scrambler"

    def generate(self, source: Source) -> list[Edit]:
        text = source.side_text
        spans = word_spans(text)
        words = [text[s:e] for s, e in spans]
        if len(set(words)) < 2:
            return []
        rng = random.Random(source.settings.seed * 1_000_003 + zlib.crc32(text.encode("utf-8")))
        edits = []
        for _ in range(source.settings.samples):
            order = words[:]
            while order == words:
                rng.shuffle(order)
            changes = [Change(s, e, new) for (s, e), old, new in zip(spans, words, order) if new != old]
            edits.append(source.edit(self.name, changes, f"{len(changes)} words moved", len(changes)))
        return edits


__all__ = ["BUILTIN_RULES", "BUILTIN_RULES_TEXT", "Negation", "Scrambler", "WordReplacer", "inflect",
           "negation_sites", "parse_rules"]
