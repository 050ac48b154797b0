#!/usr/bin/env bash
# Build what bench/gpu/run-all.sh runs on the device machine (here, with npm; the device has no Node):
#   1. npm run build                       -> dist/ (segkit)
#   2. esbuild bench/topk-webgpu.ts         -> dist/bench/topk-webgpu.mjs: one ESM file with segkit,
#      tfjs-core/-cpu/-webgpu and bench/lib bundled in; only `webgpu` (dawn.node) stays external, and
#      remote.sh resolves it from .gpu-pack.
#   3. bench/gpu/pack.sh                    -> .gpu-pack/ (node, dawn.node, runtime deps) and .gl/ (cached)
# Then: run(command="bash bench/gpu/run-all.sh", carry=[".gl", ".gpu-pack", "dist"])
# BEFORE_COMMIT=<commit>: also bundle this bench against segkit built from that commit, into
# dist/bench/topk-webgpu-before.mjs, for a before/after comparison in one device call (run-all.sh
# runs it when present), and reduce-scan-webgpu-before.mjs and sort-webgpu-before.mjs likewise.
# Locally on lavapipe: bash bench/gpu/remote.sh dist/bench/topk-webgpu.mjs --cases=moe-router
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
# FROM_COMMIT=HEAD (or any commit): build dist/ from that commit in a temporary worktree, so the
# device runs committed code even while src/ has uncommitted edits. Default: the working tree.
if [ -n "${FROM_COMMIT:-}" ]; then
  wt="$(mktemp -d)/segkit"
  git worktree add -q --detach "$wt" "$FROM_COMMIT"
  ln -s "$ROOT/node_modules" "$wt/node_modules"
  (cd "$wt" && npx tsc -p tsconfig.build.json)
  rm -rf dist && cp -r "$wt/dist" dist
  git worktree remove --force "$wt"
elif [ "${SKIP_TSC:-0}" != 1 ]; then
  npm run build --silent
fi
mkdir -p dist/bench
grep -q 'webgpuBackend' dist/index.js || { echo "build.sh: dist/index.js exports no webgpuBackend (segkit before 4995057?)" >&2; exit 1; }
bundle() { # bundle SEGKIT_DIST OUTFILE [ENTRY]
  node_modules/.bin/esbuild "${3:-bench/topk-webgpu.ts}" --bundle --platform=node --format=esm --target=node20 \
    --external:webgpu --alias:segkit="$1/index.js" --log-level=warning \
    --banner:js="import { createRequire as __segkitCreateRequire } from 'node:module'; const require = __segkitCreateRequire(import.meta.url);" \
    --outfile="$2"
}
rm -f dist/bench/*-before.mjs dist/bench/build-info-before.txt
if [ -n "${BEFORE_COMMIT:-}" ]; then
  bwt="$(mktemp -d)/segkit-before"
  git worktree add -q --detach "$bwt" "$BEFORE_COMMIT"
  ln -s "$ROOT/node_modules" "$bwt/node_modules"
  (cd "$bwt" && npx tsc -p tsconfig.build.json)
  bundle "$bwt/dist" dist/bench/topk-webgpu-before.mjs
  # The segmented suites' benches too, for before/after sweeps by hand (run-all.sh runs top-k's).
  for b in reduce-scan sort; do if [ -f "$bwt/bench/$b-webgpu.ts" ]; then bundle "$bwt/dist" "dist/bench/$b-webgpu-before.mjs" "$bwt/bench/$b-webgpu.ts"; fi; done
  git worktree remove --force "$bwt"
  echo "$(git rev-parse --short "$BEFORE_COMMIT")" > dist/bench/build-info-before.txt
fi
if [ -n "${FROM_COMMIT:-}" ]; then info="$(git rev-parse --short "$FROM_COMMIT") (clean worktree)"; else info="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo ' + uncommitted changes in src/')"; fi
bundle ./dist dist/bench/topk-webgpu.mjs
# Segmented reduce and scan on WebGPU (torch's side: bench/gpu/torch_reduce_scan.py).
bundle ./dist dist/bench/reduce-scan-webgpu.mjs bench/reduce-scan-webgpu.ts
# Segmented sort on WebGPU (torch's side: bench/gpu/torch_sort.py).
bundle ./dist dist/bench/sort-webgpu.mjs bench/sort-webgpu.ts
# Batched copy on WebGPU (torch's side: bench/gpu/torch_copy.py).
bundle ./dist dist/bench/copy-webgpu.mjs bench/copy-webgpu.ts
# Where a small call's time goes on Dawn: raw submit ladder beside segkit's plan.run per algorithm.
bundle ./dist dist/bench/webgpu-call-floor.mjs bench/webgpu-call-floor.ts
bundle ./dist dist/bench/webgpu-call-profile.mjs bench/webgpu-call-profile.ts
# GPU time per launch of the multi-launch variants (imports segkit's sources: plan prefixes are internal).
bundle ./dist dist/bench/webgpu-launch-profile.mjs bench/webgpu-launch-profile.ts
# The workgroup sorts the top-k kernels share, timed alone (imports the WGSL blocks from segkit's sources).
bundle ./dist dist/bench/workgroup-sort-webgpu.mjs bench/workgroup-sort-webgpu.ts
# Every algorithm's conformance cases under many policies on the real device (SUITES=soak): what lavapipe cannot show.
# segkit from src/ here (not dist/): the conformance cases import src/, and one copy of segkit must serve both.
bundle ./src dist/bench/webgpu-policy-soak.mjs bench/webgpu-policy-soak.ts
echo "built $(date -u +%FT%TZ) from $info" > dist/bench/build-info.txt
cat dist/bench/build-info.txt; ls -l dist/bench/topk-webgpu.mjs
[ "${SKIP_PACK:-0}" = 1 ] || bash bench/gpu/pack.sh >/dev/null
