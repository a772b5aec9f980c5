#!/usr/bin/env bash
# Proves `npm ci` still succeeds where naudiodon cannot build (as on Raspberry Pi OS): copies the
# committed tree to a scratch folder and runs `npm ci` with a compiler wrapper that fails inside
# naudiodon's build only. Expect: npm ci exits 0, node_modules/naudiodon is absent, and the
# PortAudio backend reports NOC_ERR_AUDIO_BACKEND_UNAVAILABLE.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d /tmp/nocturn-optional-XXXXXX)
git -C "$root" archive HEAD | tar -x -C "$scratch"
mkdir "$scratch/fakebin"
for c in g++ c++ gcc cc; do
  cat >"$scratch/fakebin/$c" <<SH
#!/bin/sh
case "\$(pwd)" in *naudiodon*) echo "simulated: naudiodon cannot build here" >&2; exit 1;; esac
exec /usr/bin/$c "\$@"
SH
  chmod +x "$scratch/fakebin/$c"
done
cd "$scratch"
PATH="$scratch/fakebin:$PATH" npm ci --no-audit --no-fund
test ! -e node_modules/naudiodon
node --import tsx -e "
  import('./src/adapters/portaudio/naudiodon.ts').then(({ loadNaudiodon }) => {
    try { loadNaudiodon(); process.exit(1) } catch (e) { console.log(e.code + ': ' + e.message) }
  })"
echo "ok: npm ci succeeded without naudiodon ($scratch)"
