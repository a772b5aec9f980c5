// The local speech detector (issue 16 item 2): false opens per hour on the committed room-noise
// fixtures, fresh and right after a conversation (re-armed), beside the detection rate on the
// speech fixtures, also right after a conversation. The noise clips (3.5 s) are played forwards
// then backwards, over and over, so the loop has no seam for the detector to hear as a click.
// NOCTURN_BENCH_VAD_MINUTES sets the minutes of noise per fixture and case (default 10).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SpeechDetector } from '../src/audio/speech-detector.js'
import { parseWav } from '../src/audio/wav.js'
import { machineLine } from './machine.js'

const FRAME = 640 // 20 ms at 16 kHz
const MINUTES = Number(process.env.NOCTURN_BENCH_VAD_MINUTES ?? 10)
const DIR = join(import.meta.dirname, '..', 'fixtures', 'vad')
const manifest = JSON.parse(readFileSync(join(DIR, 'manifest.json'), 'utf8')) as {
  speech: { file: string; onsetMs: number }[]
  nonSpeech: string[]
}
const clip = (f: string) => parseWav(readFileSync(join(DIR, f)), 16_000, f).pcm
const out = (s: string) => process.stdout.write(`${s}\n`)

/** `ms` of `pcm` played forwards then backwards, repeatedly. */
function pingPong(pcm: Uint8Array, ms: number): Uint8Array {
  const src = new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength))
  const dst = new Int16Array(Math.floor(ms / 20) * (FRAME / 2))
  const n = src.length
  for (let i = 0; i < dst.length; i++) {
    const j = i % n
    dst[i] = src[Math.floor(i / n) % 2 ? n - 1 - j : j] as number
  }
  return new Uint8Array(dst.buffer)
}

/** Opens while feeding `pcm` (re-armed after each, as the session loop does); the ms of each. */
function opens(d: SpeechDetector, pcm: Uint8Array): number[] {
  const at: number[] = []
  for (let i = 0; i + FRAME <= pcm.byteLength; i += FRAME) {
    if (d.push(pcm.subarray(i, i + FRAME), i / 32)) {
      at.push(i / 32)
      d.rearm()
    }
  }
  return at
}

/** A detector just out of a conversation: it opened on speech and was re-armed at the close. */
async function afterConversation(): Promise<SpeechDetector> {
  const d = await SpeechDetector.create()
  const speech = clip(manifest.speech[0]?.file as string)
  for (let i = 0; i + FRAME <= speech.byteLength; i += FRAME) {
    if (d.push(speech.subarray(i, i + FRAME), i / 32)) break
  }
  d.rearm()
  return d
}

out(`machine: ${machineLine()}; ${MINUTES} min of each noise per case`)
out('')
out(
  '| noise fixture | fresh: false opens | per hour | after a conversation: false opens | per hour |',
)
out('|---|---|---|---|---|')
let cpuMs = 0
let frames = 0
for (const file of manifest.nonSpeech) {
  const noise = pingPong(clip(file), MINUTES * 60_000)
  const fresh = await SpeechDetector.create()
  const t0 = performance.now()
  const a = opens(fresh, noise).length
  cpuMs += performance.now() - t0
  frames += noise.byteLength / FRAME
  fresh.close()
  const after = await afterConversation()
  const b = opens(after, noise).length
  after.close()
  const perHour = (n: number) => ((n * 60) / MINUTES).toFixed(1)
  out(`| ${file} | ${a} | ${perHour(a)} | ${b} | ${perHour(b)} |`)
}
out('')
let detected = 0
const latencies: number[] = []
for (const { file, onsetMs } of manifest.speech) {
  // Right after a conversation and 5 s of quiet room: does the next utterance open a session?
  const d = await afterConversation()
  opens(d, pingPong(clip('noise-room.wav'), 5000))
  const speech = clip(file)
  let opened: number | undefined
  for (let i = 0; i + FRAME <= speech.byteLength && opened === undefined; i += FRAME) {
    if (d.push(speech.subarray(i, i + FRAME), i / 32)) opened = (i + FRAME) / 32
  }
  d.close()
  if (opened !== undefined && opened > onsetMs && opened - onsetMs <= 300) {
    detected++
    latencies.push(opened - onsetMs)
  }
}
out(
  `Detection on speech right after a conversation: ${detected} of ${manifest.speech.length} utterances open a session within 300 ms of onset (${latencies.map((l) => `${l.toFixed(0)} ms`).join(', ')}).`,
)
out(`Detector cost: ${((cpuMs / frames) * 1000).toFixed(1)} µs per 20 ms frame (fresh runs).`)
