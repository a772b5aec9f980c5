#!/usr/bin/env bash
# Runs a command as on a fresh Debian machine without the system packages the tests use
# (scripts/system-packages.txt), without uninstalling them: PATH becomes a folder of links to every
# command on PATH and in the sbin folders except the files those packages installed (dpkg -L).
# A package every Debian has (Essential, or Priority required: what debootstrap's minbase and the
# Debian container images hold) stays, as it would on that machine. NOCTURN_SYSTEM_PATH tells the
# tests' skip helpers to look there instead of adding the sbin folders back; NOCTURN_CHROMIUM names
# a browser that is not there. NOCTURN_REQUIRE_SYSTEM is cleared: missing packages skip.
# Usage: scripts/without-system-packages.sh <command> [args...]   (Debian: needs dpkg)
set -euo pipefail
list="$(cd "$(dirname "$0")" && pwd)/system-packages.txt"
[ "$#" -gt 0 ] || { echo "usage: $0 <command> [args...]" >&2; exit 2; }

command -v dpkg-query >/dev/null || { echo "$0: needs dpkg (Debian): it asks dpkg what each package installed" >&2; exit 2; }

farm="$(mktemp -d "${TMPDIR:-/tmp}/nocturn-no-packages.XXXXXX")"
trap 'rm -rf "$farm"' EXIT
mkdir "$farm/bin"

hidden_packages=()
hidden_commands=()
while read -r package commands; do
  case "$package" in '' | '#'*) continue ;; esac
  fields="$(dpkg-query -W -f='${Essential} ${Priority}' "$package" 2>/dev/null || true)"
  case "$fields" in 'yes '* | *' required') continue ;; esac
  hidden_packages+=("$package")
  read -ra listed <<<"$commands"
  hidden_commands+=("${listed[@]}")
done <"$list"

# Every file of the hidden packages, and the commands the list names for them (python3's is in
# python3-minimal), resolved: /bin is /usr/bin on a merged /usr, and alternatives such as
# x-www-browser point into them.
sbin_path="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
{
  dpkg -L "${hidden_packages[@]}" 2>/dev/null || true
  for c in "${hidden_commands[@]}"; do PATH="$sbin_path" command -v "$c" || true; done
} | xargs -r -d '\n' realpath -eq 2>/dev/null | sort -u >"$farm/hidden" || true

IFS=: read -ra dirs <<<"$sbin_path"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  find -L "$d" -maxdepth 1 -type f -perm -u+x 2>/dev/null || true
done >"$farm/commands"
xargs -r -d '\n' realpath -m -- <"$farm/commands" | paste - "$farm/commands" >"$farm/candidates"
# The first of a name on PATH wins, as in the shell's own lookup; a hidden file is left out.
awk -F'\t' 'NR == FNR { hidden[$1] = 1; next }
  { n = $2; sub(/.*\//, "", n) }
  !(n in seen) { seen[n] = 1; if (!($1 in hidden)) print $2 }' "$farm/hidden" "$farm/candidates" |
  while IFS= read -r f; do ln -s "$f" "$farm/bin/${f##*/}"; done

# The hiding proves itself: no command of a hidden package is left to be found.
for c in "${hidden_commands[@]}"; do
  # A path (/usr/bin/chromium) by its name: `command -v` finds any path that exists.
  if [ -e "$farm/bin/${c##*/}" ]; then
    echo "$0: $c is still there after hiding its package" >&2
    exit 1
  fi
done
echo "nocturn: without ${hidden_packages[*]} ($(wc -l <"$farm/hidden") files hidden)" >&2
export PATH="$farm/bin"
export NOCTURN_SYSTEM_PATH="$farm/bin"
export NOCTURN_CHROMIUM="$farm/bin/chromium"
unset NOCTURN_REQUIRE_SYSTEM
"$@"
