"""Time :meth:`model.batch.rows.RowSchema.values` (the dict of one exported row: CSV, JSON Lines, Parquet, Ray
blocks) on 25,000 hand-made rows of each task (issue 30), made as :mod:`benchmarks.corpus_metrics_tasks` makes them.

    python -m benchmarks.row_export [--n 25000] [--repeat 5]

Prints one JSON line: the median milliseconds per task for all rows.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from benchmarks.corpus_metrics_tasks import LABELS, make_rows
from model.batch.rows import RowSchema


def main() -> None:
    """Print the median time of ``RowSchema.values`` over ``--n`` rows per task (JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=25000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    result = {"rows": args.n}
    for task in ("binary", "single_label", "multi_label", "regression"):
        rows = make_rows(task, args.n)
        schema = RowSchema.of_rows(rows) if task == "binary" else RowSchema(LABELS if task != "regression" else (),
                                                                            task)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            for r in rows:
                schema.values(r)
            times.append(time.perf_counter() - t0)
        result[f"{task}_ms"] = round(1000 * float(np.median(times)), 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
