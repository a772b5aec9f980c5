#!/usr/bin/env bash
# Makes the speech-detection fixtures in fixtures/vad/: several synthetic voices and several kinds
# of silence and room noise, 16 kHz S16LE mono WAV, a few seconds each. CI does not run this; the
# files are committed. Needs espeak-ng and sox (Debian: apt-get install espeak-ng sox).
#
# Speech clips (one spoken softly, 20 dB down): 1.000 s of room noise, then the utterance (its own leading silence trimmed, so
# speech starts at exactly 1000 ms), then noise to the end. The onset is in manifest.json.
set -euo pipefail
cd "$(dirname "$0")/../fixtures/vad"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
RATE=16000
ONSET=1.0
LEN=3.5
fmt=(-r "$RATE" -c 1 -b 16 -e signed-integer)

# A quiet room: pink noise about 50 dB below full scale. Seeded so reruns give the same bytes.
sox -R -n "${fmt[@]}" "$tmp/room.wav" synth "$LEN" pinknoise vol 0.006

speech() { # name voice speed pitch level-dBFS text
  local name=$1 voice=$2 speed=$3 pitch=$4 level=$5 text=$6
  espeak-ng -v "$voice" -s "$speed" -p "$pitch" -w "$tmp/$name.raw.wav" "$text"
  # Trim espeak's own lead-in, resample, pad to the onset, cut to length, then add the room.
  sox "$tmp/$name.raw.wav" "${fmt[@]}" "$tmp/$name.clean.wav" \
    silence 1 0.005 0.5% norm "$level" pad "$ONSET" "$LEN"
  sox -R -m "$tmp/$name.clean.wav" "$tmp/room.wav" "${fmt[@]}" "$name.wav" trim 0 "$LEN"
}

speech speech-en-us-m en-us 160 45 -6 "Turn on the kitchen lights, please."
speech speech-en-gb-f en-gb+f3 150 65 -6 "What is the weather like tomorrow morning?"
speech speech-en-us-f2 en-us+f2 175 70 -10 "Set a timer for ten minutes."
speech speech-en-sc-m en-gb-scotland+m3 140 35 -6 "Play some quiet music in the living room."
speech speech-de-m de+m4 150 40 -8 "Wie spät ist es jetzt?"
speech speech-soft en-us+f4 140 55 -26 "hello there"

# Non-speech: digital silence with dither, the quiet room, a louder room, mains hum with a fan.
sox -R -n "${fmt[@]}" noise-silence.wav synth "$LEN" sine 1000 vol 0 dither
cp "$tmp/room.wav" noise-room.wav
sox -R -n "${fmt[@]}" noise-room-loud.wav synth "$LEN" pinknoise vol 0.03
sox -R -n "${fmt[@]}" "$tmp/hum.wav" synth "$LEN" sine 50 vol 0.02
sox -R -n "${fmt[@]}" "$tmp/fan.wav" synth "$LEN" brownnoise vol 0.05
sox -R -m "$tmp/hum.wav" "$tmp/fan.wav" "${fmt[@]}" noise-hum-fan.wav

cat > manifest.json <<JSON
{
  "sampleRateHz": $RATE,
  "speech": [
    { "file": "speech-en-us-m.wav", "onsetMs": 1000 },
    { "file": "speech-en-gb-f.wav", "onsetMs": 1000 },
    { "file": "speech-en-us-f2.wav", "onsetMs": 1000 },
    { "file": "speech-en-sc-m.wav", "onsetMs": 1000 },
    { "file": "speech-de-m.wav", "onsetMs": 1000 },
    { "file": "speech-soft.wav", "onsetMs": 1000 }
  ],
  "nonSpeech": ["noise-silence.wav", "noise-room.wav", "noise-room-loud.wav", "noise-hum-fan.wav"]
}
JSON
ls -l
