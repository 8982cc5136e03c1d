"""Cold-start benchmark: time to the first painted window, from source and from the bundle. Asserts nothing.

Runs the app ``--runs`` times with ``--quit-after-show`` under a virtual X server (``xvfb-run -a``) and
prints one JSON line per variant with the median and all runs, in seconds:

* ``first_window_s``: the app's own measurement, from its own start (its first module,
  ``desktop_app.__main__``) to the first paint of the main window; the interpreter's / bootloader's start-up before
  it is not counted (issue 46: the process's start in ``/proc`` counted whatever ``exec``-ed into the app), ``wall_s``
  includes it;
* ``wall_s``: wall clock around the whole process (start-up, first paint, shutdown; Xvfb start excluded
  as far as possible: ``xvfb-run`` is started once per run, so it is included; use ``first_window_s``).

Usage::

    python -m benchmarks.startup [--runs 5] [--model DIR] [--only source|bundle] [--baseline DIR]

"From source" runs ``python -m desktop_app`` with this interpreter; "bundle" runs
``dist/AttentionExplorer/AttentionExplorer`` (build it first with build_scripts/build.py).
The numbers depend on the machine's load and disk cache; the first run is usually the coldest. ``--baseline DIR``
adds a "baseline" variant, another source tree (e.g. ``git archive COMMIT | tar -x -C DIR``) run with this
interpreter, its runs taking turns with "source" so both see the same load (before/after in one run).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def time_runs(cmd: list[str], runs: int, env: dict[str, str], cwd: Path = ROOT) -> dict:
    """Run ``cmd`` (which must print ``{"first_window_s": ...}``) ``runs`` times in ``cwd``; return medians and
    samples."""
    first, wall, errors = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        wall.append(time.perf_counter() - t0)
        value = None
        for line in proc.stdout.splitlines():
            if line.startswith("{") and "first_window_s" in line:
                value = json.loads(line)["first_window_s"]
        if proc.returncode != 0 or value is None:
            errors.append(f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
        else:
            first.append(value)
    return {
        "first_window_s_median": round(statistics.median(first), 3) if first else None,
        "first_window_s": [round(v, 3) for v in first],
        "wall_s_median": round(statistics.median(wall), 3),
        "errors": errors,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line entry; prints JSON lines, returns 0 (2 when xvfb-run is missing)."""
    ap = argparse.ArgumentParser(description="Cold-start time to the first window (median of N runs).")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled one)")
    ap.add_argument("--only", choices=("source", "bundle"), default=None)
    ap.add_argument("--baseline", type=Path, default=None, help="another source tree, timed in turns with this one")
    args = ap.parse_args(argv)
    xvfb = shutil.which("xvfb-run")
    if not xvfb:
        print("error: xvfb-run not found (apt-get install xvfb xauth)", file=sys.stderr)
        return 2
    extra = ["--quit-after-show"] + (["--model", str(args.model)] if args.model else [])
    variants = {
        "source": [sys.executable, "-m", "desktop_app"],
        "bundle": [str(ROOT / "dist" / "AttentionExplorer" / "AttentionExplorer")],
    }
    if args.baseline is not None:
        return _interleaved(xvfb, extra, args)
    for name, cmd in variants.items():
        if args.only and name != args.only:
            continue
        if name == "bundle" and not Path(cmd[0]).is_file():
            print(json.dumps({"variant": name, "error": "bundle not built"}))
            continue
        env = dict(os.environ)
        env.pop("QT_QPA_PLATFORM", None)  # a real (virtual) X display, not offscreen
        result = time_runs([xvfb, "-a", "-s", "-screen 0 1600x1000x24"] + cmd + extra, args.runs, env)
        print(json.dumps({"variant": name, "runs": args.runs, **result}), flush=True)
    return 0


def _interleaved(xvfb: str, extra: list[str], args) -> int:
    """``--baseline``: one run of the baseline tree, one of this one, ``--runs`` times; a JSON line per variant."""
    out: dict[str, list[dict]] = {"baseline": [], "source": []}
    for _ in range(args.runs):
        for name, root in (("baseline", args.baseline.resolve()), ("source", ROOT)):
            env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
            env["PYTHONPATH"] = str(root)
            cmd = [xvfb, "-a", "-s", "-screen 0 1600x1000x24", sys.executable, "-m", "desktop_app"] + extra
            out[name].append(time_runs(cmd, 1, env, cwd=root))
    for name, runs in out.items():
        first = [v for r in runs for v in r["first_window_s"]]
        print(json.dumps({"variant": name, "runs": args.runs, "first_window_s_median":
                          round(statistics.median(first), 3) if first else None, "first_window_s": first,
                          "errors": [e for r in runs for e in r["errors"]]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
