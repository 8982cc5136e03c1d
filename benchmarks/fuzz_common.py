"""What the two robustness fuzzes share: the server child process and the run loop (see
:mod:`benchmarks.fuzz_folders` and :mod:`benchmarks.fuzz_sessions`)."""

from __future__ import annotations

import argparse
import json
import random
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path


class Server:
    """A ``python -m MODULE --serve`` child process answering one path per line; restarted after a crash or a
    hang (shared by :mod:`benchmarks.fuzz_sessions`)."""

    def __init__(self, module: str) -> None:
        self.proc, self.module = None, module

    def ask(self, folder: Path, timeout: float) -> dict:
        """The server's JSON answer for ``folder``; ``{"outcome": "hang" | "crash"}`` when it gives none."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, "-m", self.module, "--serve"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True)
        self.proc.stdin.write(f"{folder}\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        outcome = "hang" if not ready else "crash"
        code = self.proc.poll()
        self.close()
        return {"outcome": outcome, "message": f"process exit {code}" if outcome == "crash" else ""}

    def close(self) -> None:
        """Stop the child process."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def parse_args(doc: str, argv, n: int) -> argparse.Namespace:
    """The fuzz command line: ``--n``, ``--seed``, ``--timeout`` (seconds per case), ``--show`` and the hidden
    ``--serve``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--n", type=int, default=n)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--show", type=int, default=0, help="examples of each outcome to print")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def run_cases(module: str, args: argparse.Namespace, make_case: Callable[[int], tuple[Path, object]]) -> dict:
    """Make ``args.n`` cases (``make_case(i)`` -> ``(path, what was damaged)``), have a ``module --serve`` server
    judge each, remove each case; print and return the counts (and ``--show`` examples per outcome)."""
    server, counts, examples, t0 = Server(module), Counter(), {}, time.perf_counter()
    try:
        for i in range(args.n):
            path, what = make_case(i)
            result = server.ask(path, args.timeout)
            counts[result["outcome"]] += 1
            examples.setdefault(result["outcome"], []).append({"case": what, "message": result["message"][:300]})
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
    finally:
        server.close()
    report = {"cases": args.n, "seed": args.seed, "seconds": round(time.perf_counter() - t0, 1),
              "counts": dict(counts.most_common()),
              "examples": {k: v[: args.show] for k, v in examples.items() if args.show}}
    print(json.dumps(report, indent=1, ensure_ascii=True))
    return report


def answer_lines(judge_line: Callable[[Path, int], dict]) -> None:
    """The server's loop: a path per line on stdin, ``judge_line(path, n)`` as one JSON line on stdout (what the
    libraries print goes to stderr, so it cannot break the protocol)."""
    out, sys.stdout = sys.stdout, sys.stderr
    for n, line in enumerate(sys.stdin):
        out.write(json.dumps(judge_line(Path(line.strip()), n)) + "\n")
        out.flush()


def fuzz_main(module: str, doc: str, argv, n: int, serve: Callable[[], None],
              prepare: Callable[[Path, random.Random], Callable[[int], tuple[Path, object]]]) -> dict:
    """A fuzz's ``main``: ``--serve`` runs ``serve()``; otherwise ``prepare(root, rng)`` (a scratch folder and the
    seeded generator) gives ``make_case`` for :func:`run_cases`; the scratch folder is removed at the end."""
    args = parse_args(doc, argv, n)
    if args.serve:
        serve()
        return {}
    root = Path(tempfile.mkdtemp(prefix=module.rsplit(".", 1)[-1] + "_"))
    try:
        return run_cases(module, args, prepare(root, random.Random(args.seed)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
