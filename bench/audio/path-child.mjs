// The audio path alone, for the CPU part of audio.bench.ts: started by the benchmark in a process
// of its own so that what is measured is what runs on the device (plain node on the compiled
// `dist/`, no loader: tsx alone costs ~5 ms of CPU a second while idle). With `--import tsx` and
// base "src" it runs the sources instead.
//
// Settings in NOCTURN_BENCH_AUDIO (JSON): base, capture and playback PCM names, seconds of audio;
// `volume` puts the gain stage (audio/gain-out.js) in front of the speaker at that percent; `feed`
// "stream" hands the reply over in 100 ms chunks at twice real time, "once" (the default) all at once.
// Prints one JSON line `{ ready, mic, aplay }` (the children's pids) once capture and playback run,
// then plays until stdin closes.
const s = JSON.parse(process.env.NOCTURN_BENCH_AUDIO ?? '{}')
const base = new URL(`../../${s.base}/`, import.meta.url)
const mod = (p) => import(new URL(p, base).href)
const [{ createAlsaSpeaker }, { ArecordMic }, { realClock }, { WebRtcVad }, { silentLogger }] =
  await Promise.all([
    mod('adapters/alsa/alsa-speaker.js'),
    mod('adapters/alsa/arecord-mic.js'),
    mod('adapters/clock/real-clock.js'),
    mod('audio/webrtc-vad.js'),
    mod('core/logger.js'),
  ])
const clock = realClock()
// Capture → VAD per 20 ms frame, as between sessions; playback of one long reply, paced.
const vad = await WebRtcVad.create({ sampleRateHz: 16_000, frameMs: 20, mode: 3 })
const mic = new ArecordMic({ device: s.capture, clock, logger: silentLogger })
let speech = 0
await mic.start({ frame: (f) => (vad.isSpeech(f) ? speech++ : 0), error: () => {} })
const alsa = createAlsaSpeaker({ device: s.playback, clock, logger: silentLogger })
const { device } = alsa
let speaker = alsa.speaker
if (s.volume !== undefined) {
  const { GainOut } = await mod('audio/gain-out.js')
  speaker = new GainOut(alsa.speaker, () => s.volume)
}
const samples = new Int16Array(s.seconds * 24_000 * (s.feed === 'stream' ? 2 : 1))
for (let j = 0; j < samples.length; j++) samples[j] = 1000 + (j % 30_000)
const bytes = new Uint8Array(samples.buffer)
let feeding
if (s.feed === 'stream') {
  // 100 ms of audio every 50 ms, as a live model streams a reply.
  let at = 0
  feeding = setInterval(() => {
    if (at >= bytes.byteLength) return clearInterval(feeding)
    speaker.write(bytes.subarray(at, at + 4800))
    at += 4800
  }, 50)
} else {
  for (let at = 0; at < bytes.byteLength; at += 48_000) speaker.write(bytes.subarray(at, at + 48_000))
}
await new Promise((r) => setTimeout(r, 500))
process.stdout.write(`${JSON.stringify({ ready: true, mic: mic.pid, aplay: device.pid })}\n`)
process.stdin.resume()
process.stdin.on('end', async () => {
  clearInterval(feeding)
  await mic.stop()
  await speaker.close()
  vad.close()
  process.exit(0)
})
