#!/usr/bin/env bash
# The second, shorter GPU call of issue 47 part 2 (after scoring.sh): batch size 256 before/after, the prefetch
# thread on/off, labels at 64 vs 256 tokens per pass, and the non-GUI tests with each result printed (-v).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpud/captum-*.whl && export PYTHONPATH=/tmp/site
mkdir -p ../shared/data/imdb && cp .gpud/test.jsonl.gz ../shared/data/imdb/
D=$PWD/.gpud/test.jsonl.gz; M=$PWD/resources/model
b() { timeout 100 python3 -m benchmarks.gpu_scoring "$@" --data "$D" --model "$M" ${B_ARGS:-} 2>>"$OUT/bench.err" | tee -a "$OUT/bench.jsonl"; }
b rate --batch-size 256 --tree .gpud/old --save "$OUT/old256.npy" --repeats 2
b rate --batch-size 256 --save "$OUT/new256.npy" --repeats 2
b rate --batch-size 256 --no-prefetch --repeats 2
b rate --batch-size 64 --save "$OUT/new64.npy" --repeats 2
b tokenize
python3 - "$OUT" <<'PY' | tee -a "$OUT/bench.jsonl"
import json, sys, numpy as np
o = sys.argv[1]; ld = lambda n: np.load(f"{o}/{n}.npy")
a, b, c = ld("old256"), ld("new256"), ld("new64")
print(json.dumps({"old256_vs_new256_identical": bool((a == b).all()), "labels_256_vs_64": float((b.argmax(1) == c.argmax(1)).mean()),
                  "max_abs_diff_256_vs_64": float(np.abs(b - c).max())}))
PY
rm -f "$OUT"/*.npy; echo "bench done at $((SECONDS - t0)) s"; [ -n "${SKIP_TESTS:-}" ] && exit 0
ign=$(grep -lE "PySide6|pyqtgraph|desktop_app|gui_helpers|qtbot" tests/test_*.py | sed 's/^/--ignore=/')
left=$(( ${BUDGET_S:-200} - (SECONDS - t0) )); echo "non-GUI tests with ${left} s"
timeout "$left" python3 -m pytest -v -p no:cacheprovider -n 14 $ign --ignore=tests/test_architecture.py tests \
    > "$OUT/tests.log" 2>&1; echo "tests rc=$?"
grep -cE "PASSED" "$OUT/tests.log"; grep -E "FAILED|ERROR" "$OUT/tests.log" | head -20
