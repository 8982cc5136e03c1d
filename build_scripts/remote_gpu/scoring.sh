#!/usr/bin/env bash
# GPU batch scoring (issue 47, part 2), one call on a lent GPU machine, from the repository root:
#   bash build_scripts/remote_gpu/scoring.sh      (carry .gpud: see below; results under $OUT)
# Needs, in the ignored folder .gpud (made here by `bash build_scripts/remote_gpu/scoring.sh pack`):
#   .gpud/test.jsonl.gz (IMDB test), .gpud/old/ (the `model` package before the change, for the baseline),
#   .gpud/captum-*.whl (the explanation tests need captum; the GPU image lacks it).
# Runs: the tokenizer's ceiling, score_many's profile, score_many of the tree before/after (alternating, 64 texts
# per pass, probabilities saved and compared), the GPU default of 256, token processes, bf16; then
# tests/model/predictor/test_cuda.py and the non-GUI tests (each result printed, -v, so a run cut by its time still names them).
# The numbers of 2026-11-27 (H200): docs/performance.md, "GPU batch scoring".
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
if [ "${1:-}" = pack ]; then
    mkdir -p .gpud/old .git/info; grep -qxF /.gpud/ .git/info/exclude 2>/dev/null || echo /.gpud/ >> .git/info/exclude
    cp "${DATA:-../shared/data/imdb}/test.jsonl.gz" .gpud/
    rm -rf .gpud/old/model && git archive "${BASE:-HEAD}" model | tar -x -C .gpud/old
    .venv/bin/pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux2014_x86_64 -d .gpud captum
    du -sh .gpud; exit 0
fi
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpud/captum-*.whl && export PYTHONPATH=/tmp/site
mkdir -p ../shared/data/imdb && cp .gpud/test.jsonl.gz ../shared/data/imdb/   # where the tests look for IMDB
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; lscpu | grep 'Model name'
  python3 -c "import torch, tokenizers; print(torch.__version__, tokenizers.__version__)"; } | tee "$OUT/machine.txt"
D=$PWD/.gpud/test.jsonl.gz; M=$PWD/resources/model
b() { timeout 200 python3 -m benchmarks.gpu_scoring "$@" --data "$D" --model "$M" ${B_ARGS:-} 2>>"$OUT/bench.err" | tee -a "$OUT/bench.jsonl"; }
b tokenize --processes 15
b split
for r in 1 2; do
    b rate --batch-size 64 --tree .gpud/old --save "$OUT/old$r.npy"
    b rate --batch-size 64 --save "$OUT/new$r.npy"
done
b rate --save "$OUT/new256.npy"                       # the GPU default: 256 texts per pass
b rate --token-processes 15
b rate --batch-size 512 --max-tokens 65536 --token-processes 15
b rate --precision bf16 --save "$OUT/bf16.npy"
python3 - "$OUT" <<'PY' | tee -a "$OUT/bench.jsonl"
import json, sys, numpy as np
o = sys.argv[1]; ld = lambda n: np.load(f"{o}/{n}.npy")
old, new = ld("old1"), ld("new1")
print(json.dumps({"old_vs_new_identical": bool((old == new).all()), "old_runs_identical": bool((old == ld("old2")).all()),
                  "new_runs_identical": bool((new == ld("new2")).all()), "labels_256_vs_64": float((ld("new256").argmax(1) == old.argmax(1)).mean()),
                  "bf16_label_agreement": float((ld("bf16").argmax(1) == old.argmax(1)).mean()),
                  "bf16_max_abs_diff": float(np.abs(ld("bf16") - old).max())}))
PY
rm -f "$OUT"/*.npy
echo "bench done at $((SECONDS - t0)) s"; [ -n "${SKIP_TESTS:-}" ] && exit 0
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/model/predictor/test_cuda.py 2>&1 | tee "$OUT/test_cuda.log" | tail -5
ign=$(grep -rlE "PySide6|pyqtgraph|desktop_app|gui_helpers|qtbot" tests --include="test_*.py" | sed 's/^/--ignore=/')  # no Qt there
left=$(( 560 - (SECONDS - t0) )); echo "non-GUI tests with ${left} s"
timeout "$left" python3 -m pytest -v -p no:cacheprovider -n 14 $ign --ignore=tests/test_architecture.py tests \
    > "$OUT/tests.log" 2>&1; echo "tests rc=$?"
grep -c PASSED "$OUT/tests.log"; grep -E "FAILED|ERROR" "$OUT/tests.log" | head -20
