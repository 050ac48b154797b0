#!/usr/bin/env bash
# Build what bench/gpu/run-all.sh runs on the device machine (here, with npm; the device has no Node):
#   1. npm run build                       -> dist/ (segkit)
#   2. esbuild bench/topk-webgpu.ts         -> dist/bench/topk-webgpu.mjs: one ESM file with segkit,
#      tfjs-core/-cpu/-webgpu and bench/lib bundled in; only `webgpu` (dawn.node) stays external, and
#      remote.sh resolves it from .gpu-pack.
#   3. bench/gpu/pack.sh                    -> .gpu-pack/ (node, dawn.node, runtime deps) and .gl/ (cached)
# Then: run(command="bash bench/gpu/run-all.sh", carry=[".gl", ".gpu-pack", "dist"])
# Locally on lavapipe: bash bench/gpu/remote.sh dist/bench/topk-webgpu.mjs --cases=moe-router
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
[ "${SKIP_TSC:-0}" = 1 ] || npm run build --silent
mkdir -p dist/bench
node_modules/.bin/esbuild bench/topk-webgpu.ts --bundle --platform=node --format=esm --target=node20 \
  --external:webgpu --alias:segkit=./dist/index.js --log-level=warning \
  --banner:js="import { createRequire as __segkitCreateRequire } from 'node:module'; const require = __segkitCreateRequire(import.meta.url);" \
  --outfile=dist/bench/topk-webgpu.mjs
ls -l dist/bench/topk-webgpu.mjs
[ "${SKIP_PACK:-0}" = 1 ] || bash bench/gpu/pack.sh >/dev/null
