"""The generators that do not read the model (issue 43): what each must and must not change on hand-built texts."""

from __future__ import annotations

import pytest

from model.counterfactuals.base import WORD, Settings, Source, removal_changes, word_spans
from model.counterfactuals.lexical import BUILTIN_RULES, Negation, Scrambler, WordReplacer, inflect, parse_rules
from model.records.counterfactual import Change, apply_changes, edited_spans


def _edits(gen, text, **settings):
    return gen.generate(Source(text, settings=Settings(**settings)))


def test_word_replacer_whole_words_case_kept_every_occurrence():
    text = "Good acting. Goodness, the GOOD parts were good; goodbye."
    (edit,) = _edits(WordReplacer(), text, rules=parse_rules("good -> bad"))
    assert edit.edited == "Bad acting. Goodness, the BAD parts were bad; goodbye."
    assert edit.size == 3 and edit.note == "good -> bad"
    for (s, e), c in zip(edited_spans(edit.changes), edit.changes):
        assert edit.edited[s:e] == c.new  # the marks sit on the new words


def test_word_replacer_one_edit_per_rule_and_builtin_list():
    text = "A great film with a terrible ending."
    edits = _edits(WordReplacer(), text)
    assert [e.edited for e in edits] == ["A terrible film with a terrible ending.", "A great film with a great ending."]
    assert ("great", "terrible") in BUILTIN_RULES and ("very", "slightly") in BUILTIN_RULES
    assert _edits(WordReplacer(), "Nothing to replace here.") == []
    assert len(_edits(WordReplacer(), text, max_edits=1)) == 1


def test_parse_rules_names_the_bad_rule():
    assert parse_rules("good -> bad,\ngreat->awful") == (("good", "bad"), ("great", "awful"))
    assert parse_rules("Fine -> ") == (("fine", ""),)
    with pytest.raises(ValueError, match="'good bad'"):
        parse_rules("great -> awful, good bad")


@pytest.mark.parametrize("text, expected", [
    ("The film is good.", ["The film is not good."]),
    ("It isn't good.", ["It is good."]),
    ("It is not good.", ["It is good."]),
    ("I didn't like it.", ["I liked it."]),
    ("She doesn't enjoy it.", ["She enjoys it."]),
    ("We do not hate it.", ["We hate it."]),
    ("Didn't try it.", ["Tried it."]),
    ("You can go and it won't rain.", ["You cannot go and it won't rain.", "You can go and it will rain."]),
    ("Nothing negatable here.", []),
    ("Never have I seen it. Is it good? I have a dog. It has been fun.", ["Never have I seen it. Is it good? I have a "
                                                                          "dog. It has not been fun."]),
])
def test_negation_adds_or_removes_one_negation_per_edit(text, expected):
    assert [e.edited for e in _edits(Negation(), text)] == expected


def test_inflect_regular_and_irregular():
    assert [inflect(v, "ed") for v in ("like", "try", "watch", "see", "Go")] == ["liked", "tried", "watched", "saw",
                                                                                 "Went"]
    assert [inflect(v, "s") for v in ("watch", "try", "go", "play")] == ["watches", "tries", "goes", "plays"]


def test_scrambler_moves_words_only_and_is_deterministic():
    text = "One two, three four five! Six."
    (a,), (b,) = _edits(Scrambler(), text), _edits(Scrambler(), text)
    assert a.edited == b.edited and a.edited != text
    assert sorted(a.edited.replace(",", " ").replace("!", " ").replace(".", " ").split()) == \
        sorted(text.replace(",", " ").replace("!", " ").replace(".", " ").split())
    assert WORD.sub("", a.edited) == WORD.sub("", text) == " ,   ! ."  # punctuation and spaces stay in order
    assert len(_edits(Scrambler(), text, samples=3)) == 3
    assert _edits(Scrambler(), "same same same") == []


def test_removal_changes_keep_single_spaces():
    text = "a b c d"
    spans = word_spans(text)
    assert apply_changes(text, tuple(removal_changes(text, [spans[0], spans[1]]))) == "c d"
    assert apply_changes(text, tuple(removal_changes(text, [spans[1], spans[3]]))) == "a c"
    assert apply_changes(text, tuple(removal_changes(text, spans))) == ""


def test_apply_changes_refuses_overlaps():
    with pytest.raises(ValueError, match="outside the text or overlaps"):
        apply_changes("abcdef", (Change(0, 3, "x"), Change(2, 4, "y")))


def test_second_text_of_a_pair_is_edited_when_chosen():
    src = Source("It is fine.", "The film is good.", settings=Settings(side="second"))
    (edit,) = WordReplacer().generate(src)
    assert edit.side == "second" and edit.edited_text == "It is fine." and edit.edited_pair == "The film is bad."
    with pytest.raises(ValueError, match="no second text"):
        WordReplacer().generate(Source("It is good.", settings=Settings(side="second")))


def test_settings_are_checked_by_field():
    with pytest.raises(ValueError, match="side"):
        Settings(side="third").checked()
    with pytest.raises(ValueError, match="max_flips"):
        Settings(max_flips=3).checked()
    with pytest.raises(ValueError, match="unknown importance method 'nope'"):
        Settings(method="nope").checked()
