"""The batch readers (model.batch.readers, model.batch.opening, model.batch.walk): every format, encodings, folder rules
and bad input as statuses."""

from __future__ import annotations

import codecs
import json
import os

import pytest

from model.batch import Record, estimate_count, iter_records, normalize_gold, opening, readers
from model.batch.gold import GoldReader

_BINARY = GoldReader(("negative", "positive"))


def gold(rec: Record) -> str | None:
    """The bundled model's reading of a record's raw gold (the readers keep it raw; issue 30)."""
    return _BINARY.read(rec.gold, rec.gold_source)[0] or None

from model.files.textio import binary_kind, decode_bytes

TEXT = "Café naïve – “quoted” résumé, déjà vu. A great film!"  # needs cp1252 (en dash, curly quotes)


def records(*paths, **kw) -> list[Record]:
    return list(iter_records([str(p) for p in paths], **kw))


def one(path, **kw) -> Record:
    recs = records(path, **kw)
    assert len(recs) == 1, recs
    return recs[0]


# -- one-review .txt files and encodings -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "encoded",
    [
        TEXT.encode("utf-8"),
        codecs.BOM_UTF8 + TEXT.encode("utf-8"),
        TEXT.encode("utf-16"),  # with BOM (little-endian on this machine)
        codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"),
        TEXT.encode("cp1252"),
    ],
    ids=["utf8", "utf8-bom", "utf16", "utf16-be-bom", "cp1252"],
)
def test_txt_encodings_decode_to_the_same_text(tmp_path, encoded):
    f = tmp_path / "review.txt"
    f.write_bytes(encoded)
    rec = one(f)
    assert rec.status == "ok"
    assert rec.text == TEXT
    assert rec.source == str(f)
    assert gold(rec) is None


def test_latin1_text_decodes(tmp_path):
    text = "Ein schöner Film über Größe. Très bien joué, à voir."
    f = tmp_path / "de.txt"
    f.write_bytes(text.encode("latin-1"))
    assert one(f).text == text


def test_decode_bytes_reports_the_encoding():
    assert decode_bytes(TEXT.encode("utf-8")) == (TEXT, "utf-8")
    assert decode_bytes(codecs.BOM_UTF8 + b"abc")[0] == "abc"
    assert decode_bytes("hello".encode("utf-16-le"))[0] == "hello"  # BOM-less UTF-16 by its NUL pattern


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        (b"\x89PNG\r\n\x1a\n" + bytes(64), "PNG image"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "PDF document"),
        (b"PK\x03\x04\x14\x00\x00\x00", "ZIP archive"),
        (b"\x1f\x8b\x08\x00\x00\x00", "gzip archive"),
        (b"some text\x00\x01\x02\x03\xff\xfe binary", "binary data"),
    ],
)
def test_binary_files_get_a_status(tmp_path, payload, fragment):
    f = tmp_path / "fake.txt"
    f.write_bytes(payload)
    rec = one(f)
    assert rec.text is None
    assert rec.status.startswith("binary file")
    assert fragment in rec.status


def test_binary_kind_lets_text_through():
    assert binary_kind(TEXT.encode("utf-8")) is None
    assert binary_kind(TEXT.encode("utf-16")) is None
    assert binary_kind(b"\x89PNG\r\n\x1a\n") == "PNG image"


@pytest.mark.parametrize(("content", "status"), [(b"", "empty file"), (b" \n\t \r\n  ", "whitespace only")])
def test_empty_and_whitespace_files(tmp_path, content, status):
    f = tmp_path / "e.txt"
    f.write_bytes(content)
    rec = one(f)
    assert (rec.text, rec.status) == (None, status)


def test_undecodable_bytes(tmp_path):
    f = tmp_path / "garbage.txt"
    f.write_bytes(bytes(range(1, 256)) * 3)  # no NUL, not UTF-8, no code page makes sense of it
    rec = one(f)
    assert rec.text is None
    assert "undecodable" in rec.status


def test_too_large_file(tmp_path):
    f = tmp_path / "big.txt"
    f.write_bytes(b"good movie " * 200)  # 2,200 bytes
    rec = one(f, max_file_bytes=1000)
    assert rec.text is None and rec.status.startswith("too large")
    assert one(f, max_file_bytes=5000).ok
    assert one(f, max_file_bytes=None).ok


def test_missing_and_unsupported_files(tmp_path):
    assert one(tmp_path / "nope.txt").status == "not found"
    doc = tmp_path / "review.docx"
    doc.write_text("x")
    rec = one(doc)
    assert rec.text is None and "unsupported file type '.docx'" in rec.status


# -- symlinks and permissions ------------------------------------------------------------------------------------


def test_broken_symlink(tmp_path):
    link = tmp_path / "gone.txt"
    link.symlink_to(tmp_path / "missing-target.txt")
    rec = one(link)
    assert rec.text is None and rec.status.startswith("broken symlink")
    # the same inside a folder
    (tmp_path / "ok.txt").write_text("fine film")
    recs = records(tmp_path)
    assert [r.status.split(" ")[0] for r in recs] == ["broken", "ok"]


def test_symlink_loop_is_reported_once_and_walk_terminates(tmp_path):
    d = tmp_path / "reviews"
    (d / "sub").mkdir(parents=True)
    (d / "sub" / "a.txt").write_text("a fine film")
    (d / "sub" / "back").symlink_to(d)  # sub/back -> reviews: a loop
    self_loop = d / "self.txt"
    self_loop.symlink_to(self_loop)  # a link to itself (ELOOP)
    recs = records(d)
    by_source = {os.path.relpath(r.source, d): r for r in recs}
    assert by_source["sub/a.txt"].ok
    assert "symlink loop" in by_source["sub/back"].status
    assert "symlink loop" in by_source["self.txt"].status
    assert len(recs) == 3


def test_duplicate_real_path_is_scored_once(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("a fine film")
    (tmp_path / "alias.txt").symlink_to(f)
    recs = records(tmp_path, f)
    ok = [r for r in recs if r.ok]
    dups = [r for r in recs if r.status.startswith("duplicate of")]
    assert len(ok) == 1 and len(dups) == 2


def _make_unreadable(tmp_path):
    f = tmp_path / "secret.txt"
    f.write_text("a fine film")
    f.chmod(0)
    return f


def test_unreadable_file_real_permissions(tmp_path):
    f = _make_unreadable(tmp_path)
    try:
        if os.access(f, os.R_OK):
            pytest.skip("running as root: chmod 000 does not stop reading (see the monkeypatched test)")
        assert one(f).status == "permission denied"
    finally:
        f.chmod(0o644)


def test_unreadable_file_simulated(tmp_path, monkeypatch):
    """As root chmod does not bite, so make reading raise PermissionError the way the OS would."""
    f = tmp_path / "secret.txt"
    f.write_text("a fine film")

    def deny(path):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(opening, "read_sample", deny)
    rec = one(f)
    assert (rec.text, rec.status) == (None, "permission denied")


def test_unreadable_folder_simulated(tmp_path, monkeypatch):
    d = tmp_path / "locked"
    d.mkdir()
    real_scandir = os.scandir

    def scandir(path):
        if os.path.realpath(path) == str(d.resolve()):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(readers.os, "scandir", scandir)
    assert one(d).status == "permission denied"


# -- multi-review files ------------------------------------------------------------------------------------------


def test_csv_with_quoted_newlines_and_labels(tmp_path):
    f = tmp_path / "reviews.csv"
    f.write_text(
        'id,Review,Sentiment\n1,"A great film,\nwith a ""twist"" at the end.",positive\n'
        "2,Boring.,neg\n\n3,,pos\n4,Fine.,maybe\n",
        encoding="utf-8",
    )
    recs = records(f)
    assert [r.source for r in recs] == [f"{f}:row {i}" for i in (1, 2, 3, 4)]
    assert recs[0].text == 'A great film,\nwith a "twist" at the end.'
    assert [gold(r) for r in recs] == ["positive", "negative", "positive", None]
    assert [r.status for r in recs] == ["ok", "ok", "empty text", "ok"]


def test_csv_long_field_and_row_cap(tmp_path):
    long_text = "very long review " * 12_000  # 204,000 characters: over the csv module's default field limit
    f = tmp_path / "long.csv"
    f.write_text(f'text\n"{long_text}"\nshort one\n')
    recs = records(f)
    assert [r.text for r in recs] == [long_text, "short one"]
    capped = records(f, max_file_bytes=1000)
    assert capped[0].text is None and capped[0].status.startswith("text too long")
    assert capped[1].ok


def test_csv_text_column_choice_and_errors(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("title,body\nT1,Loved it\nT2,Hated it\n")
    rec = one(f)
    assert rec.text is None and "no text column" in rec.status and "'body'" in rec.status
    assert [r.text for r in records(f, text_column="BODY")] == ["Loved it", "Hated it"]
    rec = one(f, text_column="missing")
    assert "no column named 'missing'" in rec.status


def test_tsv_cp1252(tmp_path):
    f = tmp_path / "reviews.tsv"
    f.write_bytes(f"text\tlabel\n{TEXT}\t1\nAwful, just awful.\t0\n".encode("cp1252"))
    recs = records(f)
    assert [(r.text, gold(r)) for r in recs] == [(TEXT, "positive"), ("Awful, just awful.", "negative")]


def test_csv_utf16_with_bom(tmp_path):
    f = tmp_path / "u16.csv"
    f.write_bytes(f'text,label\n"{TEXT}",pos\n'.encode("utf-16"))
    assert [(r.text, gold(r)) for r in records(f)] == [(TEXT, "positive")]


def test_jsonl(tmp_path):
    f = tmp_path / "r.jsonl"
    lines = [
        json.dumps({"text": "Wonderful", "label": 1}),
        "",
        json.dumps({"text": "Terrible", "label": 0}),
        "{not json",
        json.dumps({"review": "Review key works", "label": -1}),
        json.dumps({"title": "no text here"}),
        json.dumps(["not", "an", "object"]),
    ]
    f.write_text("\n".join(lines) + "\n")
    recs = records(f)
    assert [r.source.rsplit(":", 1)[1] for r in recs] == ["line 1", "line 3", "line 4", "line 5", "line 6", "line 7"]
    assert [gold(r) for r in recs[:2]] == ["positive", "negative"]
    assert recs[2].status.startswith("invalid JSON")
    assert (recs[3].text, gold(recs[3])) == ("Review key works", None)
    assert recs[4].status == "no 'text' field"
    assert "expected a JSON object" in recs[5].status


def test_json_list_and_object(tmp_path):
    lst = tmp_path / "list.json"
    lst.write_text(json.dumps([{"text": "one", "sentiment": "pos"}, {"text": "two"}, {"text": "  "}]))
    recs = records(lst)
    assert [(r.source.rsplit(":", 1)[1], r.text, gold(r), r.status) for r in recs] == [
        ("row 1", "one", "positive", "ok"),
        ("row 2", "two", None, "ok"),
        ("row 3", None, None, "empty text"),
    ]
    obj = tmp_path / "obj.json"
    obj.write_text(json.dumps({"content": "single", "gold": "negative"}))
    assert one(obj) == Record(str(obj), "single", "negative", "ok")
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    assert one(bad).status.startswith("invalid JSON")


# -- folders -----------------------------------------------------------------------------------------------------


def test_aclimdb_layout_gives_gold_labels_in_natural_order(tmp_path):
    root = tmp_path / "aclImdb" / "test"
    for label, names in {"pos": ["10_9.txt", "2_7.txt"], "neg": ["1_1.txt"], "unsup": ["5_0.txt"]}.items():
        (root / label).mkdir(parents=True)
        for n in names:
            (root / label / n).write_text(f"{label} review {n}")
    (root / "urls_pos.txt").write_text("http://www.imdb.com/title/tt0000001/usercomments\n")  # metadata: skipped
    (root / "labeledBow.feat").write_text("9 0:1 1:2\n")  # unsupported inside a folder: skipped silently
    (root / ".hidden.txt").write_text("hidden")
    recs = records(tmp_path / "aclImdb")
    rel = [os.path.relpath(r.source, root) for r in recs]
    assert rel == ["neg/1_1.txt", "pos/2_7.txt", "pos/10_9.txt", "unsup/5_0.txt"]
    assert [gold(r) for r in recs] == ["negative", "positive", "positive", None]
    assert all(r.ok for r in recs)


def test_folder_is_streamed_lazily(tmp_path, monkeypatch):
    """The first record arrives after reading one file, not all of them."""
    for i in range(50):
        (tmp_path / f"{i}.txt").write_text(f"review {i}")
    opened = []
    real = opening.read_sample

    def spy(path):
        opened.append(path)
        return real(path)

    monkeypatch.setattr(opening, "read_sample", spy)
    it = iter_records([tmp_path])
    first = next(it)
    assert first.text == "review 0"
    assert len(opened) == 1
    assert len(list(it)) == 49


def test_estimate_count(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "b.csv").write_text("text\none\ntwo\nthree\n")
    (tmp_path / "c.jsonl").write_text('{"text": "1"}\n{"text": "2"}')
    (tmp_path / "skip.bin").write_text("x")
    assert estimate_count([tmp_path]) == 1 + 3 + 2
    assert estimate_count([tmp_path]) == len(records(tmp_path))


@pytest.mark.parametrize(
    ("value", "gold"),
    [("pos", "positive"), ("Positive ", "positive"), (1, "positive"), ("1", "positive"), (True, "positive"),
     ("neg", "negative"), ("NEGATIVE", "negative"), (0, "negative"), ("0", "negative"),
     (-1, None), ("unsup", None), ("", None), (None, None), (0.5, None)],
)
def test_normalize_gold(value, gold):
    assert normalize_gold(value) == gold
