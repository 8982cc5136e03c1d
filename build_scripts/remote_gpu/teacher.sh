#!/usr/bin/env bash
# The GPU half of the retraining on a lent GPU machine (issue 57), from the repository root, one call per packed
# part (build_scripts/remote_gpu/pack.sh), back to back:  bash build_scripts/remote_gpu/teacher.sh
# Each call stashes the part it carries (.gpuN/part.N) in /root/stash; the call that completes the set checks the
# SHA-256, unpacks all-MiniLM-L6-v2 and the data, runs model/training/recipes/teacher_gpu.toml on cuda (resuming
# what a cut earlier run finished in /root/r) under a deadline, and leaves in $OUT:
#   teacher_logits_by_text.npz   the artifact (commit it to model/training/artifacts/)
#   run.log, stages.jsonl, teacher_metrics.json, machine.txt
# Planned at <= 8 device minutes with the start-up (recipe header). The parts may come in any order; a call that
# finds the set incomplete (e.g. a fresh machine after the last one went back) says which it has and exits 0: call
# again with the others. Exit 3: no part carried, or the payload's SHA-256 differs (pack again).
# TEACHER_DEADLINE_S (500): seconds from this call's start after which the pipeline is stopped (a rerun on the warm
# machine resumes it); TEACHER_DEVICE (cuda), STASH (/root/stash), W (/root/r), PYTHON (python3) for a dry run.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PY=${PYTHON:-python3}; OUT=${OUT:-/tmp/out}; S=${STASH:-/root/stash}; export W=${W:-/root/r}; mkdir -p "$OUT" "$S" "$W"; t0=$SECONDS
for d in .gpu[0-9]*; do [ -f "$d/manifest.txt" ] && cp "$d"/part.* "$d/manifest.txt" "$S/"; done
read -r n sha < "$S/manifest.txt" || { echo "no .gpuN folder carried: run pack.sh and carry .gpu1"; exit 3; }
have=$(ls "$S"/part.* 2>/dev/null | wc -l)
if [ "$have" -lt "$n" ]; then
    echo "parts stashed: $(cd "$S" && echo part.*) of $n; call again at once carrying the others (.gpuN)"; exit 0
fi
if [ ! -d "$S/payload" ]; then
    cat $(ls "$S"/part.* | sort -t. -k2 -n) > "$S/payload.tar"
    echo "$sha  $S/payload.tar" | sha256sum -c --quiet || { echo "payload SHA-256 differs: pack again"; exit 3; }
    tar -C "$S" -xf "$S/payload.tar" && rm "$S/payload.tar" && xz -d -T0 "$S/payload/minilm/model.safetensors.xz"
fi
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null; nproc; lscpu | grep 'Model name'
  "$PY" -c "import torch, transformers, tokenizers; print(torch.__version__, transformers.__version__, tokenizers.__version__)"
  echo "unpacked at ${SECONDS}s"; } | tee "$OUT/machine.txt"
left=$(( ${TEACHER_DEADLINE_S:-500} - (SECONDS - t0) ))
PYTHONUNBUFFERED=1 timeout "$left" "$PY" -m model.training.pipeline teacher_gpu --data "$S/payload/data" --work "$W" \
    --device "${TEACHER_DEVICE:-cuda}" --set "teacher.base=$S/payload/minilm" --set "artifact.commit=$(cat "$S/payload/commit.txt")" \
    > >(tee -a "$OUT/run.log" | grep --line-buffered -i -E '^\[pipeline\]|^\{|error|traceback') 2>&1
echo "pipeline rc=$? at $((SECONDS - t0)) s"
bash build_scripts/remote_gpu/collect.sh
