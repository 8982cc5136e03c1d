"""Background work off the GUI thread: jobs as plain functions, run by one worker class.

``jobs.py``         :class:`~.jobs.Jobs` (one per job kind: its thread, name and niceness) runs job functions on its
                    :class:`~.jobs.JobRunner`, which drops stale requests and results and handles cancellation,
                    progress and errors once
``handle.py``       the thread plumbing under it (:class:`~.handle.WorkerHandle`, :class:`~.handle.BackgroundWorker`,
                    renicing)
``state_protocol.py`` what the controllers read of the explorer state and set on it (typed protocols)
``inference.py``    model loading and ``Predictor.predict`` (thread "inference")
``internals.py``    one layer's Q, K, V for the neuron and steps views (thread "attention-internals", nice +5)
``attention_flow.py`` value-norm and ALTI flows of the current text (thread "attention-flow", nice +5)
``compare.py``      a pin compared with the current text (thread "compare", nice +10)
``explanations.py`` explanation methods and their faithfulness (thread "explanation-worker", nice +10)
``batch.py``        batch scoring of files and folders (thread "batch-scoring", nice +15)
``corpus/metrics.py`` the corpus dock's metrics (thread "corpus-metrics", nice +10), the map slices' metrics
                    (thread "corpus-slices", nice +10) and word scores (thread "corpus-tokens", which relays the child
                    process of ``corpus/words_process.py``, nice +15)
``preload.py``      importing the Hugging Face backend ahead (thread "hf-preload")

Every job that runs the model uses the one shared Predictor (issue 41: one copy of the weights). Nothing here imports the window,
the panels, the views or the state.
"""
