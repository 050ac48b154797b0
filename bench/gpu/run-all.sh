#!/usr/bin/env bash
# The one command for the device machine (no Node, no registry there). Prepare here first:
#   bash bench/gpu/build.sh          (npm run build, bundle dist/bench/topk-webgpu.mjs, pack.sh)
# then:
#   run(command="bash bench/gpu/run-all.sh", carry=[".gl", ".gpu-pack", "dist"], timeout_s=480)
# It runs: remote.sh setup (loaders, node, dawn.node), nvidia-smi, the copy-kernel probe, the segkit
# WebGPU vs tfjs-webgpu bench on one Dawn device, torch.topk with CUDA events on the same shapes, and
# the comparison table. Writes into $OUT (or bench/results/): gpu.txt, copy-kernel.json,
# topk-webgpu.json, torch-topk.json, compare.md, compare.json, and the logs.
# The WebGPU bench runs with --variants (each applicable variant forced) and the diagnostic case
# single-bits; extra args are passed on (e.g. --cases=moe-router --runs=5).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT="${OUT:-$ROOT/bench/results}"
mkdir -p "$OUT"
[ -f dist/bench/topk-webgpu.mjs ] || { echo "run-all.sh: dist/bench/topk-webgpu.mjs missing: run bench/gpu/build.sh and carry dist" >&2; exit 2; }

{ cat dist/bench/build-info.txt 2>/dev/null; date -u; uname -m; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; } > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

source bench/gpu/remote.sh || exit 2
set +e
echo "== copy-kernel probe"
OUT="$OUT" timeout 120 node bench/gpu/copy-kernel.mjs --mib=256 --target-ms=100 --submits=5 > /tmp/copy-kernel.log 2>&1
grep -E '"(GBps|perDispatch|emptySubmit|oneTiny|jsEncode)|rror' /tmp/copy-kernel.log | head -20
echo "== segkit WebGPU vs tfjs-webgpu"
timeout 300 node dist/bench/topk-webgpu.mjs --out="$OUT" --variants --extra-cases=single-bits --no-tfjs-for=single-bits "$@" 2>&1 | tee "$OUT/topk-webgpu.log"
echo "== torch.topk"
PYTHONUNBUFFERED=1 timeout 150 python3 bench/gpu/torch_topk.py --out="$OUT" > /dev/null 2> "$OUT/torch.log"; tail -n 12 "$OUT/torch.log"
echo "== comparison"
python3 bench/gpu/compare.py "$OUT"
rm -f "$OUT/compare.json"   # at most 8 files come back from the device; compare.py rebuilds it from the JSONs
