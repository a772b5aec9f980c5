#!/usr/bin/env bash
# Makes fixtures/offline/: what the person says to the speaker in the offline runs, 16 kHz S16LE
# mono WAV over a quiet room, so the local detectors have something to wake on. CI does not run
# this; the files are committed. Needs espeak-ng and sox.
# - unlock-request.wav (speech mode, 4 s): a second of quiet room, then the request.
# - wake-scene.wav (wake mode, `npm start`, 30 s): a sentence without the wake phrase at 1 s (it
#   opens nothing), "Hey Jarvis, please unlock the front door for the plumber." in one breath at
#   6 s, and "Hey Jarvis, stop, thanks." at 20 s, over the long answer (a barge-in). The wake
#   phrase is said as in fixtures/wake/hey_jarvis.wav (espeak-ng en-us, 150 words a minute).
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

# say NAME VOICE TEXT: trimmed of the voice's own silence, normalised.
say() {
  espeak-ng -v "$2" -s 150 -p 60 -w "$tmp/$1.raw.wav" "$3"
  sox "$tmp/$1.raw.wav" "${fmt[@]}" "$tmp/$1.wav" silence 1 0.005 0.5% reverse silence 1 0.005 0.5% reverse norm -6
}
WAKE_LEN=30.0
sox -R -n "${fmt[@]}" "$tmp/room-wake.wav" synth "$WAKE_LEN" pinknoise vol 0.006
say other en-gb+f3 "Is the kettle on yet? I could murder a cup of tea."
espeak-ng -v en-us -s 150 -w "$tmp/wake.raw.wav" "hey jarvis"
sox "$tmp/wake.raw.wav" "${fmt[@]}" "$tmp/wake.wav" silence 1 0.005 0.5% reverse silence 1 0.005 0.5% reverse norm -3
say request en-gb+f3 "Please unlock the front door for the plumber."
say stop en-gb+f3 "Stop, thanks."
sox "$tmp/wake.wav" "$tmp/request.wav" "$tmp/wake-request.wav"
sox "$tmp/wake.wav" "$tmp/stop.wav" "$tmp/wake-stop.wav"
sox "$tmp/other.wav" "$tmp/other-at.wav" pad 1.0
sox "$tmp/wake-request.wav" "$tmp/request-at.wav" pad 6.0
sox "$tmp/wake-stop.wav" "$tmp/stop-at.wav" pad 20.0
sox -R -m "$tmp/room-wake.wav" "$tmp/other-at.wav" "$tmp/request-at.wav" "$tmp/stop-at.wav" \
  "${fmt[@]}" wake-scene.wav trim 0 "$WAKE_LEN"
ls -l
