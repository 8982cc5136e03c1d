"""The Corpus dock's jobs: :mod:`.metrics` (the metrics and corpus token scores; the word scoring in a child
process, :mod:`.words_process`), :mod:`.map_jobs` (the corpus map; UMAP in a child process, :mod:`.map_process`) and
:mod:`.report` (Export > Report / Metrics)."""
