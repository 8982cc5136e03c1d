"""Batch scoring, reading and scoring: files and folders in, one result row per review out.

Data flow: paths -> :mod:`.walk` (folder walker) -> :mod:`.readers` (one reader per file extension,
:data:`~model.batch.readers.READERS`; bytes decoded by :mod:`model.files.textio`) -> :class:`Record` ->
:mod:`.engine` (:func:`score_records`, chunked ``Predictor.score_many``; :mod:`.ray_engine` the same on a Ray cluster;
:mod:`.gold` reads the gold labels for the model) -> :class:`ResultRow` (:mod:`.rows`; its columns,
:class:`RowSchema`, follow the model's labels and task) -> :mod:`.export` (CSV / JSON Lines / Parquet, atomic;
:mod:`.shards` a folder of Parquet shards) or the GUI's table. What is read of the rows afterwards lives in the
packages above this one: :mod:`model.corpus` (a scored corpus's analysis: metrics, words, the map, the A-vs-B
comparison), :mod:`model.report` (``metrics.json`` and ``report.html``) and :mod:`model.scorer`
(``attention-explorer-score``). No torch is imported here: the engine reads a :class:`model.Predictor`'s ``labels``,
``reads_pairs``, ``model_dir`` and ``options()`` (task, precision, head mask, long-text policy: taken once, at a run's
start) and calls its ``score_many``.
"""

from .columns import Columns
from .engine import EXPORT_COLUMNS, ResultRow, Summary, Timer, failed_row, score_records
from .export import FORMATS, RowWriter, format_for_path, read_results, write_rows
from .gold import GoldReader
from .readers import DEFAULT_MAX_FILE_BYTES, READERS, SUPPORTED_EXTENSIONS, Record, normalize_gold
from .rows import RowSchema
from .walk import estimate_count, iter_records

__all__ = [
    "Columns", "GoldReader", "RowSchema", "DEFAULT_MAX_FILE_BYTES", "EXPORT_COLUMNS", "FORMATS", "READERS", "SUPPORTED_EXTENSIONS", "Record", "ResultRow",
    "RowWriter", "Summary", "Timer", "estimate_count", "failed_row", "format_for_path", "iter_records",
    "normalize_gold", "read_results", "score_records", "write_rows",
]
