"""Benchmarks (``python -m benchmarks.NAME``), outside the product packages, the wheel and the bundle.

* :mod:`.predict`: ``score_many`` throughput, ``predict`` latency, peak RSS;
* :mod:`.batch_cli`: the scoring CLI on many reviews (throughput, memory);
* :mod:`.explain`: explanation methods' cost;
* :mod:`.render`: GUI redraw times (head switch, links);
* :mod:`.long_review`: GUI responsiveness while a very long review is analysed;
* :mod:`.batch_gui`: GUI responsiveness during batch scoring;
* :mod:`.startup`: cold start of the app / the bundle;
* :mod:`.bench_ray`: the scoring CLI with ``--engine local`` and ``--engine ray``.
"""
