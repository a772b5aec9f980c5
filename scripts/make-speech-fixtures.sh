#!/bin/sh
# Regenerates the canned speech the fake live server plays: short real spoken phrases, raw
# 24 kHz mono s16le (what Gemini Live sends), with the words beside each for the transcription.
# Needs espeak-ng and sox (Debian: apt-get install -y espeak-ng sox). CI does not run this; the
# files are committed. Output differs slightly between espeak-ng versions, which is fine.
set -eu
dir="$(cd "$(dirname "$0")/.." && pwd)/fixtures/speech"
mkdir -p "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

say() { # name, words
  printf '%s\n' "$2" > "$dir/$1.txt"
  espeak-ng -v en-gb -s 170 -w "$tmp/$1.wav" "$2"
  # Trim leading/trailing silence, resample to 24 kHz, mono, 16-bit little-endian, no header.
  sox "$tmp/$1.wav" -r 24000 -c 1 -b 16 -e signed-integer -L -t raw "$dir/$1.s16" \
    silence 1 0.02 0.5% reverse silence 1 0.02 0.5% reverse
}

say hello 'Hello, how can I help?'
say checking 'Let me check that for you.'
say waiting 'Waiting for Anna'\''s phone.'
say unlocked 'The front door is unlocked.'
say time 'It is twenty past seven.'
ls -l "$dir"
