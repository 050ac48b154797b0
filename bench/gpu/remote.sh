#!/usr/bin/env bash
# Run a Node script with Dawn/WebGPU on the device machine (or locally on lavapipe).
# Needs .gpu-pack/ (from bench/gpu/pack.sh) and, on the device, .gl/ -- carry both:
#   run(command="bash bench/gpu/remote.sh bench/gpu/copy-kernel.mjs", carry=[".gl", ".gpu-pack"])
# Usage: bash bench/gpu/remote.sh [node args...] script.mjs [script args...]   (execs node)
#    or: source bench/gpu/remote.sh    (sets PATH/env in your shell; then run `node a.mjs; node b.mjs`)
_segkit_sourced=0; [ "${BASH_SOURCE[0]}" != "$0" ] && _segkit_sourced=1
[ $_segkit_sourced = 1 ] && _segkit_oldopts="$(set +o)"
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
PACK="$ROOT/.gpu-pack"
PREFIX="${SEGKIT_GPU_PREFIX:-/tmp/segkit-gpu}"
[ -f "$PACK/node.xz" ] || { echo "remote.sh: $PACK/node.xz missing; run bench/gpu/pack.sh and carry .gpu-pack" >&2; return 2 2>/dev/null || exit 2; }

unxz_to() { # unxz_to SRC DST  (xz may be missing on the device image; python3 has lzma)
  if command -v xz >/dev/null 2>&1; then xz -dc "$1" > "$2"
  else python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],"wb"), 1<<20)' "$1" "$2"; fi
}

# 1. Vulkan/GL loaders (device README): unpack the .gl debs into / on the device machine, or
#    wherever no libvulkan.so.1 is installed. Skipped on a box that already has a loader
#    (e.g. the dev container with lavapipe) unless SEGKIT_FORCE_GL=1.
if [ -d .gl ] && ls .gl/*.deb >/dev/null 2>&1; then
  if [ -d /usr/local/nvidia ] || [ "${SEGKIT_FORCE_GL:-0}" = 1 ] || ! ldconfig -p | grep -q 'libvulkan\.so\.1'; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
  fi
fi

# 2. Node into $PREFIX/bin/node (once per machine).
mkdir -p "$PREFIX/bin" "$PREFIX/node_modules"
want="$(cat "$PACK/node.version" 2>/dev/null || echo unknown)"
if [ ! -x "$PREFIX/bin/node" ] || [ "$("$PREFIX/bin/node" -p 'process.versions.node' 2>/dev/null)" != "$want" ]; then
  unxz_to "$PACK/node.xz" "$PREFIX/bin/node.part" && chmod +x "$PREFIX/bin/node.part" && mv "$PREFIX/bin/node.part" "$PREFIX/bin/node"
fi

# 3. webgpu package (+ the repo's runtime deps, if packed) into $PREFIX/node_modules. Made
#    resolvable WITHOUT touching the repo: an ESM resolve hook (module.register, via NODE_OPTIONS
#    --import) retries any bare specifier that fails normal resolution from $PREFIX/node_modules
#    (ESM ignores NODE_PATH; NODE_PATH is set too, for require()).
pv="$(cat "$PACK/webgpu.version" "$PACK/deps.list" 2>/dev/null | md5sum | cut -c1-12)"
if [ "$(cat "$PREFIX/node_modules/.pack.stamp" 2>/dev/null)" != "$pv" ]; then
  rm -rf "$PREFIX/node_modules"; mkdir -p "$PREFIX/node_modules"
  for t in "$PACK/webgpu.tar.xz" "$PACK/deps.tar.xz"; do
    [ -f "$t" ] || continue
    unxz_to "$t" "$PREFIX/pkg.tar" && tar xf "$PREFIX/pkg.tar" -C "$PREFIX/node_modules" && rm -f "$PREFIX/pkg.tar"
  done
  echo "$pv" > "$PREFIX/node_modules/.pack.stamp"
fi
cat > "$PREFIX/hooks.mjs" <<HOOK
const fallbackParent = 'file://$PREFIX/node_modules/';
export async function resolve(specifier, context, next) {
  try { return await next(specifier, context); }
  catch (e) {
    if (e?.code !== 'ERR_MODULE_NOT_FOUND' || /^(\.|\/|file:|node:|data:)/.test(specifier)) throw e;
    return next(specifier, { ...context, parentURL: fallbackParent });
  }
}
HOOK
cat > "$PREFIX/register.mjs" <<REG
import { register } from 'node:module';
register('file://$PREFIX/hooks.mjs');
REG
case " ${NODE_OPTIONS:-} " in *"$PREFIX/register.mjs"*) ;; *) export NODE_OPTIONS="--import=file://$PREFIX/register.mjs${NODE_OPTIONS:+ $NODE_OPTIONS}";; esac
export NODE_PATH="$PREFIX/node_modules${NODE_PATH:+:$NODE_PATH}"
export PATH="$PREFIX/bin:$PATH"

# 4. Vulkan driver selection: NVIDIA ICD on the device machine, else lavapipe if present.
NV_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
LVP_ICD=/usr/share/vulkan/icd.d/lvp_icd.json
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
  if [ -f "$NV_ICD" ]; then export VK_DRIVER_FILES="$NV_ICD" VK_ICD_FILENAMES="$NV_ICD"
  elif [ -f "$LVP_ICD" ]; then export VK_DRIVER_FILES="$LVP_ICD" VK_ICD_FILENAMES="$LVP_ICD"; fi
fi
[ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ] && \
  export __EGL_VENDOR_LIBRARY_FILENAMES="${__EGL_VENDOR_LIBRARY_FILENAMES:-/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"

if [ $_segkit_sourced = 1 ]; then eval "$_segkit_oldopts"; echo "remote.sh: node=$(command -v node) VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"; return 0; fi
[ $# -gt 0 ] || { echo "usage: bash bench/gpu/remote.sh [node args...] script.mjs [args...]" >&2; exit 2; }
exec "$PREFIX/bin/node" "$@"
