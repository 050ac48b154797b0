#!/usr/bin/env bash
# Install Mesa lavapipe (software Vulkan) from bookworm-backports so that Dawn
# (the `webgpu` npm package) can run WebGPU on a CPU-only Debian bookworm box.
# Stock bookworm Mesa (22.3) is too old: Dawn rejects its lavapipe adapter.
#
# Idempotent, non-interactive; run as root (or via sudo). Fast no-op when the
# lavapipe ICD from backports is already installed.
#
# Afterwards run node with:
#   VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json XDG_RUNTIME_DIR=/tmp node ...
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

ICD=/usr/share/vulkan/icd.d/lvp_icd.json
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# Already installed from backports? (Mesa major >= 23 is what Dawn accepts.)
ver="$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)"
if [ -f "$ICD" ] && dpkg-query -W -f='${Status}' libvulkan1 2>/dev/null | grep -q 'install ok installed' \
   && [ -n "$ver" ] && [ "${ver%%.*}" -ge 23 ] 2>/dev/null; then
  echo "install-lavapipe: mesa-vulkan-drivers $ver already installed"
  exit 0
fi

# Find the Debian mirror apt already uses (deb822 .sources or one-line .list).
mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  m="$(awk '/^URIs:/{u=$2} /^Suites:/ && / bookworm( |$)/ && u!=""{print u; exit}' "$f")"
  if [ -n "$m" ]; then mirror="$m"; break; fi
done
if [ -z "$mirror" ]; then
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    m="$(awk '$1=="deb" && $0 ~ / bookworm / {for(i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' "$f")"
    if [ -n "$m" ]; then mirror="$m"; break; fi
  done
fi
mirror="${mirror:-http://deb.debian.org/debian}"

# Add bookworm-backports unless some source already provides it.
if ! grep -rqsE 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "install-lavapipe: adding bookworm-backports from $mirror"
  echo "deb $mirror bookworm-backports main" | $SUDO tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
fi

$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers libvulkan1
test -f "$ICD"
echo "install-lavapipe: installed mesa-vulkan-drivers $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers)"
