#!/usr/bin/env bash
# collect.sh: copy the GPU half's results from /root/r into $OUT (teacher.sh ends with it; call it alone to collect
# again): the artifact as teacher_logits_by_text.npz, stages.jsonl, teacher_metrics.json
W=${W:-/root/r}; OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f "$W/artifact.npz" ] && cp "$W/artifact.npz" "$OUT/teacher_logits_by_text.npz"
[ -f "$W/stages.jsonl" ] && cp "$W/stages.jsonl" "$OUT/"
for t in teacher teacher.part; do [ -f "$W/$t/metrics.json" ] && cp "$W/$t/metrics.json" "$OUT/teacher_metrics.json"; done
[ -f "$W/teacher.part/.checkpoint/progress.json" ] && cp "$W/teacher.part/.checkpoint/progress.json" "$OUT/"
ls -la "$OUT"
