"""Compressed batch inputs (model.files.compression through model.batch.readers/walk/columns): ``reviews.jsonl.gz``,
``.xz`` and ``.bz2`` read as the file inside them, in folders too; damage is a status after the rows read before it."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma

import pytest

from model.batch import Columns, estimate_count, iter_records
from model.batch.columns import check_columns
from model.batch.readers import SUPPORTED_EXTENSIONS, SUPPORTED_PATTERNS, is_supported
from model.files.compression import split_compression

PACKERS = {".gz": gzip.compress, ".xz": lzma.compress, ".bz2": bz2.compress}
REVIEWS = [f"Review {i}: a film with caf\u00e9 scenes, \u201cquoted\u201d and {'good' if i % 2 else 'bad'}." for i in range(40)]


def _contents() -> dict[str, bytes]:
    """One file of each readable format holding (some of) :data:`REVIEWS`, as bytes."""
    jsonl = "".join(json.dumps({"text": t, "label": i % 2}) + "\n" for i, t in enumerate(REVIEWS))
    csv = "text,label\n" + "".join(f'"{t.replace(chr(34), chr(34) * 2)}",{i % 2}\n' for i, t in enumerate(REVIEWS))
    return {
        ".jsonl": jsonl.encode("utf-8"),
        ".ndjson": jsonl.encode("utf-8"),
        ".csv": csv.encode("cp1252"),  # not UTF-8: the encoding is guessed from the decompressed bytes
        ".tsv": ("text\tlabel\n" + "".join(f"{t}\t{i % 2}\n" for i, t in enumerate(REVIEWS))).encode("utf-16"),
        ".json": json.dumps([{"text": t} for t in REVIEWS]).encode("utf-8"),
        ".txt": REVIEWS[0].encode("utf-8"),
    }


def _texts(paths) -> list[tuple[str | None, str | None, str]]:
    return [(r.text, r.gold, r.status) for r in iter_records([str(p) for p in paths])]


@pytest.mark.parametrize("compression", list(PACKERS))
def test_every_format_reads_the_same_compressed_as_plain(tmp_path, compression):
    assert set(_contents()) == set(SUPPORTED_EXTENSIONS)
    for ext, data in _contents().items():
        plain, packed = tmp_path / f"r{ext}", tmp_path / f"r{ext}{compression}"
        plain.write_bytes(data)
        packed.write_bytes(PACKERS[compression](data))
        want = _texts([plain])
        assert want and all(status == "ok" for *_, status in want), (ext, want[:2])
        assert _texts([packed]) == want, ext
        assert estimate_count([str(packed)]) == estimate_count([str(plain)]), ext
        assert all(r.source.startswith(str(packed)) for r in iter_records([str(packed)]))


def test_a_folder_walk_reads_compressed_files_and_skips_archives(tmp_path):
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(_contents()[".jsonl"]))
    (tmp_path / "b.txt.xz").write_bytes(lzma.compress(b"A fine film."))
    (tmp_path / "c.tar.gz").write_bytes(gzip.compress(b"not reviews"))
    (tmp_path / "d.gz").write_bytes(gzip.compress(b"no format inside"))
    recs = list(iter_records([str(tmp_path)]))
    assert len(recs) == len(REVIEWS) + 1 and all(r.ok for r in recs)
    assert recs[-1].source.endswith("b.txt.xz") and recs[-1].text == "A fine film."
    assert estimate_count([str(tmp_path)]) == len(REVIEWS) + 1
    named = list(iter_records([str(tmp_path / "c.tar.gz")]))  # named directly: a status naming the type
    assert len(named) == 1 and "unsupported file type '.tar.gz'" in named[0].status


def test_a_truncated_file_keeps_the_rows_before_the_damage(tmp_path):
    data = "".join(json.dumps({"text": f"Row {i} " + "word " * 60}) + "\n" for i in range(3000)).encode()
    packed = gzip.compress(data)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    recs = list(iter_records([str(cut)]))
    ok = [r for r in recs if r.ok]
    assert 100 < len(ok) < 3000 and [r.text for r in ok] == [json.loads(x)["text"] for x in data.splitlines()[: len(ok)]]
    assert recs[-1].status.startswith("damaged gzip file") and not recs[-1].ok and recs[:-1] == ok


@pytest.mark.parametrize("name, fragment", [("fake.jsonl.gz", "damaged gzip file"), ("fake.csv.xz", "damaged xz file"),
                                            ("fake.txt.bz2", "damaged bzip2 file")])
def test_a_file_that_is_not_what_its_name_says_gets_a_status(tmp_path, name, fragment):
    path = tmp_path / name
    path.write_text('{"text": "plain text, not compressed"}\n', encoding="utf-8")
    recs = list(iter_records([str(path)]))
    assert len(recs) == 1 and fragment in recs[0].status and recs[0].text is None


def test_named_columns_are_checked_inside_a_compressed_table(tmp_path):
    path = tmp_path / "pairs.csv.gz"
    path.write_bytes(gzip.compress(b"premise,hypothesis,label\nA man sleeps.,Someone rests.,entailment\n"))
    assert check_columns([path], Columns("premise", "hypothesis", "label")) is None
    problem = check_columns([path], Columns("premise", "hyp", None))
    assert problem is not None and "pairs.csv.gz" in problem and "'hyp'" in problem
    rec = next(iter_records([str(path)], text_column="premise", pair_column="hypothesis"))
    assert (rec.text, rec.text_pair, rec.gold) == ("A man sleeps.", "Someone rests.", "entailment")


def test_names_split_into_format_and_compression():
    assert split_compression("a/Reviews.JSONL.GZ") == (".jsonl", ".gz")
    assert split_compression("b.csv") == (".csv", "") and split_compression("notes.gz") == ("", ".gz")
    assert split_compression("x.tar.xz") == (".tar", ".xz") and split_compression("README") == ("", "")
    assert is_supported("r.tsv.bz2") and is_supported("r.txt") and not is_supported("x.tar.gz")
    assert "*.jsonl.gz" in SUPPORTED_PATTERNS and "*.txt" in SUPPORTED_PATTERNS
    assert len(SUPPORTED_PATTERNS) == len(SUPPORTED_EXTENSIONS) * (1 + len(PACKERS))
