#!/usr/bin/env bash
# on the device: copy the tree, bench on cuda, start the GPU recipe (model/training/recipes/gpu.toml) in its own
# session, run the non-GUI tests, poll
t0=$SECONDS
rm -rf /root/repo /root/r; mkdir -p /root/repo /root/r /root/data
cp -r . /root/repo/; cp .gpud/*.jsonl.xz /root/data/
cd /root/repo
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpud/captum-*.whl
export PYTHONPATH=/tmp/site
xz -dc /root/data/test.jsonl.xz | gzip -1 > /root/test.jsonl.gz
timeout 120 python3 -m benchmarks.predict --device cuda --data /root/test.jsonl.gz > /root/r/bench_cuda.json 2> /root/r/bench.log
cat /root/r/bench_cuda.json; tail -3 /root/r/bench.log
setsid nohup python3 -m model.training.pipeline gpu --data /root/data --work /root/r --device cuda \
    --set teacher.base=/root/stash/minilm --set v3.init=/root/repo/.gpud/step4 > /root/r/pipeline.log 2>&1 < /dev/null &
sleep 3
ign=$(grep -rlE "PySide6|pyqtgraph|desktop_app|gui_helpers|qtbot" tests --include="test_*.py" | sed 's/^/--ignore=/')  # no Qt there
timeout 360 python3 -m pytest -q -p no:cacheprovider $ign tests > /root/r/tests.log 2>&1
echo "tests rc=$?"; tail -15 /root/r/tests.log
bash /root/repo/.gpud/poll.sh $((560 - (SECONDS - t0))) light
