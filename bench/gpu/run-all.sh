#!/usr/bin/env bash
# The one command for the device machine (no Node, no registry there). Prepare here first:
#   bash bench/gpu/build.sh          (npm run build, bundle dist/bench/topk-webgpu.mjs, pack.sh;
#                                     BEFORE_COMMIT=<commit> also bundles the bench against that commit)
# then:
#   run(command="bash bench/gpu/run-all.sh", carry=[".gl", ".gpu-pack", "dist"], timeout_s=600)
# It runs: remote.sh setup (loaders, node, dawn.node), nvidia-smi, the segkit WebGPU bench (vs
# tfjs-webgpu on the first issue's cases, on one Dawn device), the same bench against the "before"
# build when dist/bench/topk-webgpu-before.mjs exists, torch.topk/argmax with CUDA events on the
# same shapes, and the comparison (tables, targets, chart). Writes into $OUT (or bench/results/):
# gpu.txt, run.log, topk-webgpu.json, before-topk-webgpu.json, torch-topk.json, compare.md,
# chart.svg (at most 8 files come back from the device).
# The WebGPU bench runs with --variants (each applicable variant forced), the diagnostic case
# single-bits and the indexer's decoding shapes (a few query rows of 64K-128K keys, k = 2048); extra args are passed on to it (e.g. --cases=moe-router --runs=5 --tune='...').
# BEFORE_ARGS: the before run's own extra args (e.g. --cases=...). COPY_PROBE=1 also runs bench/gpu/copy-kernel.mjs (copy-kernel.json); NO_BEFORE=1 skips the before run.
# SUITES: which algorithms to run, of "floor reads profile launches sorts tiles onesweep soak topk reduce-scan sort copy" (default "topk"; one device call
# of 600 s holds topk with its before run, or the other three): each runs segkit's WebGPU bench and
# torch's side, then bench/gpu/compare-segmented.py tabulates and charts reduce/scan/sort/copy.
# SORT_SHAPES: the sort suite's cases beyond the fixed four, for both sides (default: medium segments,
# where 'merge' runs, a ragged batch, and single-tile batches near 1M keys where torch.sort is close).
# SORT_TOPK: its sorted top-k cases beyond k=4096 and k=10000, rows x cols : k (default: selections
# past merge's 65536 keys, which radix-select compacts and the sort's radix kernels sort).
# When more than 8 files would come back, the JSONs travel as results.tgz.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT="${OUT:-$ROOT/bench/results}"
mkdir -p "$OUT"
[ -f dist/bench/topk-webgpu.mjs ] || { echo "run-all.sh: dist/bench/topk-webgpu.mjs missing: run bench/gpu/build.sh and carry dist" >&2; exit 2; }
# Scripts may come from dist/gpu-scripts (a newer copy carried with dist) or from bench/gpu.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LOG="$OUT/run.log"
SORT_SHAPES="${SORT_SHAPES:-8x16384,128x16384,1024x8192,1x65536,16x65536,256x32768,512x16384r,1024x1024,512x2048,512x4096r}"
SORT_TOPK="${SORT_TOPK:-4x1048576:131072,1x4194304:100000,2x2097152:500000,32x262144:100000,8x1048576:262144}"

{ cat dist/bench/build-info.txt 2>/dev/null; date -u; uname -m; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; } > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

source bench/gpu/remote.sh || exit 2
set +e
# The GPU's clocks sampled every 200 ms while the suites run (clocks.csv): Dawn/Vulkan work does not
# hold the SM clock up between bursts (seen at 345-1980 MHz within one call), and a kernel timed
# while it is low reads up to ~4.5x slower. bench/gpu/clocks.py summarizes the samples.
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw --format=csv,noheader -lms 200 > "$OUT/clocks.csv" 2>/dev/null &
CLOCKS=$!
if [ "${COPY_PROBE:-0}" = 1 ]; then
  echo "== copy-kernel probe" | tee -a "$LOG"
  OUT="$OUT" timeout 120 node bench/gpu/copy-kernel.mjs --mib=256 --target-ms=100 --submits=5 >> "$LOG" 2>&1
fi
SUITES="${SUITES:-topk}"
build="$(sed -n 's/^built .* from //p' dist/bench/build-info.txt 2>/dev/null)"
for suite in $SUITES; do
case "$suite" in
topk)
  NO_TFJS="--no-tfjs-for=single-bits,indexer-decode-1,indexer-decode-8,indexer-decode-4x64k,vocab-k50,anchor-256x262144,greedy-k1,greedy-1row,indexer-64k,indexer-128k,router-16,router-8,deepseek-16k,moe-k-device,ragged-device"
  echo "== segkit WebGPU (${build:-?})" | tee -a "$LOG"
  timeout 330 node dist/bench/topk-webgpu.mjs --out="$OUT" --build="$build" --variants --extra-cases=single-bits,indexer-decode-1,indexer-decode-8,indexer-decode-4x64k "$NO_TFJS" "$@" 2>&1 | tee -a "$LOG"
  if [ -f dist/bench/topk-webgpu-before.mjs ] && [ "${NO_BEFORE:-0}" != 1 ]; then
    before="$(cat dist/bench/build-info-before.txt 2>/dev/null)"
    echo "== segkit WebGPU, before (${before:-?})" | tee -a "$LOG"
    timeout 240 node dist/bench/topk-webgpu-before.mjs --out="$OUT" --out-file=before-topk-webgpu.json --build="$before" --no-tfjs --extra-cases=single-bits ${BEFORE_ARGS:-} 2>&1 | tee -a "$LOG"
  fi
  echo "== torch.topk" | tee -a "$LOG"
  PYTHONUNBUFFERED=1 timeout 150 python3 "$HERE/torch_topk.py" --out="$OUT" > /dev/null 2>> "$LOG"; tail -n 20 "$LOG" | grep '^{' 
  echo "== comparison"
  python3 "$HERE/compare.py" "$OUT" --title="segkit top-k vs torch ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
  rm -f "$OUT/compare.json"   # compare.py rebuilds it from the JSONs
  ;;
reduce-scan)
  echo "== segkit WebGPU reduce/scan (${build:-?})" | tee -a "$LOG"
  timeout 200 node dist/bench/reduce-scan-webgpu.mjs --runs=5 --out="$OUT" 2>&1 | tee -a "$LOG"
  echo "== torch reduce/scan" | tee -a "$LOG"
  PYTHONUNBUFFERED=1 timeout 120 python3 "$HERE/torch_reduce_scan.py" --out="$OUT" > /dev/null 2>> "$LOG"
  ;;
sort)
  echo "== segkit WebGPU sort (${build:-?})" | tee -a "$LOG"
  timeout 240 node dist/bench/sort-webgpu.mjs --runs=5 --shapes="$SORT_SHAPES" --topk="$SORT_TOPK" --out="$OUT" 2>&1 | tee -a "$LOG"
  echo "== torch sort" | tee -a "$LOG"
  PYTHONUNBUFFERED=1 timeout 150 python3 "$HERE/torch_sort.py" --shapes="$SORT_SHAPES" --topk="$SORT_TOPK" --out="$OUT" > /dev/null 2>> "$LOG"
  ;;
floor)
  echo "== call floor: raw Dawn ladder and segkit plan.run on small shapes (${build:-?})" | tee -a "$LOG"
  timeout 120 node dist/bench/webgpu-call-floor.mjs --out="$OUT" 2>&1 | tee -a "$LOG"
  ;;
reads)
  echo "== read and copy floors: bare kernels over one 16M-item segment (bench/gpu/read-floor-probe.mjs)" | tee -a "$LOG"
  timeout 120 node "$HERE/read-floor-probe.mjs" --out="$OUT" 2>&1 | tee -a "$LOG"
  echo "== a single-pass scan with a decoupled look-back (bench/gpu/lookback-scan-probe.mjs)" | tee -a "$LOG"
  timeout 120 node "$HERE/lookback-scan-probe.mjs" --out="$OUT" 2>&1 | tee -a "$LOG"
  ;;
launches)
  echo "== GPU time per launch of multi-launch plans (${build:-?})" | tee -a "$LOG"
  timeout 150 node dist/bench/webgpu-launch-profile.mjs --runs=9 --out="$OUT" 2>&1 | tee -a "$LOG"
  ;;
soak)
  # Conformance cases of every algorithm, every variant forced, under workgroup sizes 64..1024 and
  # the policies' other kernel shapes; exits 1 on any output that differs from the reference.
  echo "== policy soak: every variant under many policies, against the reference (${build:-?})" | tee -a "$LOG"
  timeout 240 node dist/bench/webgpu-policy-soak.mjs --builtin --json="$OUT/soak.json" 2>&1 | tee -a "$LOG"
  ;;
sorts)
  echo "== workgroup sorts alone: the bitonic network and the rank sort (${build:-?})" | tee -a "$LOG"
  timeout 150 node dist/bench/workgroup-sort-webgpu.mjs --runs=9 --out="$OUT" 2>&1 | tee -a "$LOG"
  ;;
tiles)
  # A bare radix sort of tiles in workgroup memory (no repo code), on 512 and 256 invocations: what
  # the single-tile sort's radix ranks (segmented-sort/webgpu/tile-radix.ts) are held against.
  echo "== tile radix probe: one workgroup a segment, four 8-bit passes in workgroup memory" | tee -a "$LOG"
  for wg in 512 256; do timeout 100 node "$HERE/tile-radix-probe.mjs" --shapes=256x4096,512x2048,1024x1024 --wg=$wg 2>&1 | grep -v '^Warning' | tee -a "$LOG"; done
  ;;
onesweep)
  # A bare Onesweep (one pass a digit, a decoupled look-back; no repo code) over one 16M-key segment:
  # what segkit's radix sort (three launches a digit) is held against.
  echo "== onesweep probe: one 16M-key segment, one pass a digit with a decoupled look-back" | tee -a "$LOG"
  for shape in 512:8 256:16; do timeout 120 node "$HERE/onesweep-probe.mjs" --n=16777216 --wg=${shape%%:*} --items=${shape##*:} 2>&1 | grep -v '^Warning' | tee -a "$LOG"; done
  ;;
profile)
  echo "== CPU profile of small plan.run calls (${build:-?})" | tee -a "$LOG"
  timeout 60 node --cpu-prof --cpu-prof-dir="$OUT/profile" dist/bench/webgpu-call-profile.mjs 2>&1 | tee -a "$LOG"
  (cd "$OUT/profile" && for f in *.cpuprofile; do [ -f "$f" ] && gzip -9 "$f"; done; tar cf ../profile.tar ./*.gz) && rm -rf "$OUT/profile"
  ;;
copy)
  echo "== segkit WebGPU batched copy (${build:-?})" | tee -a "$LOG"
  timeout 150 node dist/bench/copy-webgpu.mjs --runs=5 --out="$OUT" 2>&1 | tee -a "$LOG"
  echo "== torch copy" | tee -a "$LOG"
  PYTHONUNBUFFERED=1 timeout 100 python3 "$HERE/torch_copy.py" --out="$OUT" > /dev/null 2>> "$LOG"
  ;;
*) echo "run-all.sh: unknown suite '$suite' (floor, reads, profile, launches, sorts, tiles, onesweep, soak, topk, reduce-scan, sort, copy)" | tee -a "$LOG" ;;
esac
done
if [ -f "$OUT/reduce-scan-webgpu.json" ] || [ -f "$OUT/sort-webgpu.json" ] || [ -f "$OUT/copy-webgpu.json" ]; then
  python3 "$HERE/compare-segmented.py" "$OUT" --title="segkit vs torch ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
fi
kill "$CLOCKS" 2>/dev/null
python3 "$HERE/clocks.py" "$OUT/clocks.csv" | tee -a "$LOG"
if [ "$(find "$OUT" -maxdepth 1 -type f | wc -l)" -gt 8 ]; then
  (cd "$OUT" && tar czf results.tgz ./*.json ./*.csv && rm -f ./*.json ./*.csv)
fi
