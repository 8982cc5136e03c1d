#!/usr/bin/env bash
# collect.sh light|full: copy results from /root/r into $OUT (at most 8 files)
export R=${R:-/root/r}; mode=${1:-light}
cd "$R" || exit 0
python3 - <<'PY'
import gzip, hashlib, json, os, numpy as np
R, OUT = os.environ.get("R", "/root/r"), os.environ["OUT"]
arrays, info = {}, {}
if os.path.exists(f"{R}/teacher/logits.npz"):
    t = np.load(f"{R}/teacher/logits.npz")
    for k in t.files:
        arrays["teacher_" + k] = t[k]
for name in ("aug4", "sentences"):
    p = f"{R}/{name}.jsonl.gz"
    if not os.path.exists(p):
        continue
    try:
        h, z = hashlib.sha256(), []
        with gzip.open(p, "rt", encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                h.update(row["text"].encode() + b"\n")
                z.append(row["logits"])
        arrays[name] = np.asarray(z, np.float32)
        info[name] = {"rows": len(z), "text_sha256": h.hexdigest()}
    except Exception as e:  # still being written
        info[name] = {"error": repr(e)}
if arrays:
    np.savez_compressed(f"{OUT}/logits.npz", **arrays)
json.dump(info, open(f"{OUT}/logits_info.json", "w"), indent=1)
PY
tar czf "$OUT/logs.tgz" --ignore-failed-read *.log stages.jsonl teacher/metrics.json mlm/mlm.json v*/metrics.json \
    model/metrics.json 2>/dev/null
if [ "$mode" = full ]; then
    for v in v1 v2 v3 v4; do
        [ -f "$v/model.safetensors" ] && tar cf "$OUT/$v.tar" "$v/model.safetensors" "$v/config.json" "$v/metrics.json"
    done
    [ -f mlm/model.safetensors ] && cp mlm/model.safetensors "$OUT/mlm.safetensors"
fi
ls -la "$OUT"
