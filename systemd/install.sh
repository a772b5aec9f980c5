#!/usr/bin/env bash
# Puts Nocturn on a Raspberry Pi as a system service. Run from a built checkout (npm ci && npm run
# build) as root: sudo systemd/install.sh. Safe to run again: it never overwrites config or secrets.
set -euo pipefail
cd "$(dirname "$0")/.."

[ "$(id -u)" -eq 0 ] || { echo "run as root: sudo $0" >&2; exit 1; }
[ -f dist/app/cli.js ] || { echo "build first: npm ci && npm run build" >&2; exit 1; }

# The service's own user, in the groups that own the sound card and the GPIO chips.
if ! id nocturn >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/nocturn --shell /usr/sbin/nologin nocturn
fi
for g in audio gpio spi; do
  getent group "$g" >/dev/null && usermod -aG "$g" nocturn
done

# The program.
install -d -m 0755 /opt/nocturn
cp -a dist node_modules package.json systemd /opt/nocturn/

# Configuration and secrets (LoadCredential= reads them as root and hands them to the service).
install -d -m 0755 /etc/nocturn
install -d -m 0700 /etc/nocturn/credentials
[ -f /etc/nocturn/config.json ] || node dist/app/cli.js config --example > /etc/nocturn/config.json
for c in gemini-api-key mqtt-password; do
  [ -f "/etc/nocturn/credentials/$c" ] || install -m 0600 /dev/null "/etc/nocturn/credentials/$c"
done

install -m 0644 systemd/nocturn.service /etc/systemd/system/nocturn.service
systemctl daemon-reload
echo "installed. Next:"
echo "  1. put the API key in /etc/nocturn/credentials/gemini-api-key (and the broker password in mqtt-password)"
echo "  2. edit /etc/nocturn/config.json, then: sudo -u nocturn node /opt/nocturn/dist/app/cli.js config --check"
echo "  3. sudo systemctl enable --now nocturn && journalctl -u nocturn -f"
