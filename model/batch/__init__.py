"""Batch scoring: files and folders in, one result row per review out.

Data flow: paths -> :mod:`.walk` (folder walker) -> :mod:`.readers` (one reader per file extension,
:data:`~model.batch.readers.READERS`; bytes decoded by :mod:`model.files.textio`) -> :class:`Record` ->
:mod:`.engine` (:func:`score_records`, chunked ``Predictor.score_many``; :mod:`.gold` reads the gold labels for
the model) -> :class:`ResultRow` (:mod:`.rows`; its columns, :class:`RowSchema`, follow the model's labels and task) ->
:mod:`.export` (CSV / JSON Lines / Parquet, atomic) or the GUI's table; :mod:`.corpus` (metrics of the rows,
corpus-level token importance) -> :mod:`.report` (``metrics.json``, ``report.html``). :mod:`.cli` is
``attention-explorer-score``. No torch is imported here: the engine reads a :class:`model.Predictor`'s ``labels``,
``reads_pairs``, ``model_dir`` and ``options()`` (task, precision, head mask, long-text policy: taken once, at a run's
start) and calls its ``score_many``.
"""

from .corpus import CorpusMetrics, CorpusTokens, corpus_metrics, corpus_token_scores
from .columns import Columns
from .engine import EXPORT_COLUMNS, ResultRow, Summary, Timer, failed_row, score_records
from .export import FORMATS, RowWriter, format_for_path, read_results, write_rows
from .gold import GoldReader
from .readers import DEFAULT_MAX_FILE_BYTES, READERS, SUPPORTED_EXTENSIONS, Record, normalize_gold
from .rows import RowSchema
from .walk import estimate_count, iter_records

__all__ = [
    "Columns", "CorpusMetrics", "CorpusTokens", "GoldReader", "RowSchema", "corpus_metrics", "corpus_token_scores", "DEFAULT_MAX_FILE_BYTES", "EXPORT_COLUMNS", "FORMATS", "READERS", "SUPPORTED_EXTENSIONS", "Record", "ResultRow",
    "RowWriter", "Summary", "Timer", "estimate_count", "failed_row", "format_for_path", "iter_records",
    "normalize_gold", "read_results", "score_records", "write_rows",
]
