#!/usr/bin/env bash
# poll.sh SECONDS MODE: wait for the pipeline (at most SECONDS), show progress, collect into $OUT
end=$((SECONDS + ${1:-500}))
while [ $SECONDS -lt $end ] && [ ! -f /root/r/model/metrics.json ] && pgrep -f "model.training.pipeline gpu" > /dev/null; do
    sleep 10
done
echo "== stages.jsonl (finished stages)"; cat /root/r/stages.jsonl 2>/dev/null; tail -3 /root/r/pipeline.log 2>/dev/null
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
for f in /root/r/*.log; do echo "== $f"; tail -c 400 "$f" | tr '\r' '\n' | tail -3; done
grep -h '"epoch"' /root/r/v*.log 2>/dev/null | tail -12
bash /root/repo/.gpud/collect.sh "${2:-light}"
