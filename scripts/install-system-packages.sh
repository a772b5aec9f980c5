#!/usr/bin/env bash
# Installs the Debian packages in scripts/system-packages.txt that are missing (as root: apt-get).
# Idempotent: when everything is present it installs nothing.
set -euo pipefail
list="$(dirname "$0")/system-packages.txt"

# A path stands for a package that installs no command (a model's data): present when it exists.
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ] || { [ "${1#/}" != "$1" ] && [ -e "$1" ]; }; }
need=()
while read -r package commands; do
  case "$package" in '' | '#'*) continue ;; esac
  for c in $commands; do
    if ! have "$c"; then
      need+=("$package")
      break
    fi
  done
done <"$list"

if [ "${#need[@]}" -gt 0 ]; then
  echo "nocturn: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
