"""One home for the result records: immutable, NumPy-only dataclasses that cross threads and reach the views.

Importable without torch (an import-linter contract says so). Each field is documented with its shape and dtype in
its module: :mod:`.prediction` (``Prediction``, ``Score``, the typed refusals), :mod:`.internals`
(``AttentionInternals``, ``EmbeddingNorms``), :mod:`.flow` (``AttentionFlow``), :mod:`.explanation`
(``Explanation``, ``Faithfulness``, ``ExplanationResult``), :mod:`.info` (``ModelInfo``), :mod:`.batch` (``ResultRow``,
one batch-scored input), :mod:`.corpus` (``CorpusMetrics`` and its parts, ``CorpusTokens``: a scored corpus's metrics
and word scores), :mod:`.document` (``DocumentWindows``, how a long text is read) and :mod:`.block` (``BlockTrace``,
one token through one encoder layer, the Block view's record).
"""
