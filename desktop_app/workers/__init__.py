"""Background work off the GUI thread: one worker pattern, one handle per job.

``handle.py``       :class:`~.handle.WorkerHandle` (owns a job's QThread, generation counter and shutdown) and
                    :class:`~.handle.BackgroundWorker` (generation token + abort flag, checked between steps)
``inference.py``    model loading and ``Predictor.predict`` (thread "inference")
``internals.py``    one layer's Q, K, V for the neuron and steps views (thread "attention-internals", nice +5)
``explanations.py`` explanation methods and their faithfulness (thread "explanation-worker", nice +10)
``batch.py``        batch scoring of files and folders (thread "batch-scoring", nice +15)
``corpus.py``       the corpus dock's metrics (thread "corpus-metrics", nice +10) and word scores (thread
                    "corpus-tokens", which relays the child process of ``corpus_process.py``, nice +15)

Every worker that runs the model uses the one shared Predictor (issue 41: one copy of the weights). Nothing here imports the window,
the panels or the views.
"""
