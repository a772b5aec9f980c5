#!/usr/bin/env bash
# Makes fixtures/offline/: what the person says to the speaker in the offline run (`npm start`),
# 16 kHz S16LE mono WAV with a second of quiet room before the words, so the local speech detector
# has something to wake on. CI does not run this; the file is committed. Needs espeak-ng and sox.
set -euo pipefail
cd "$(dirname "$0")/../fixtures/offline"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fmt=(-r 16000 -c 1 -b 16 -e signed-integer)
LEN=4.0
sox -R -n "${fmt[@]}" "$tmp/room.wav" synth "$LEN" pinknoise vol 0.006
espeak-ng -v en-gb+f3 -s 150 -p 60 -w "$tmp/raw.wav" "Please unlock the front door for the plumber."
sox "$tmp/raw.wav" "${fmt[@]}" "$tmp/clean.wav" silence 1 0.005 0.5% norm -6 pad 1.0 "$LEN"
sox -R -m "$tmp/clean.wav" "$tmp/room.wav" "${fmt[@]}" unlock-request.wav trim 0 "$LEN"
echo "Please unlock the front door for the plumber." > unlock-request.txt
ls -l
