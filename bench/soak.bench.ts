// The soak of issue 16: `nocturn`'s appliance hears a household that speaks every 20 s for
// NOCTURN_BENCH_SOAK_MINUTES (default 10). Each utterance should open exactly one session (the
// fake Live service answers it, the session closes on its idle timeout), and nothing else should.
// Reports sessions opened vs utterances, RSS, and the event loop's delay p99 per session.
// Targets: RSS ≤ 100 MB, loop p99 ≤ 5 ms.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { parseWav, wavHeader } from '../src/audio/wav.js'
import { silentLogger } from '../src/core/logger.js'
import { FakeLiveServer } from '../src/testing/fake-live-server/index.js'
import { machineLine, quantile } from './machine.js'

const ROOT = resolve(import.meta.dirname, '..')
const MINUTES = Number(process.env.NOCTURN_BENCH_SOAK_MINUTES ?? 10)
const CYCLE_S = 20
const MODEL = 'gemini-2.5-flash-native-audio-preview-12-2025'
const out = (s: string) => process.stdout.write(`${s}\n`)
const vad = (f: string) => parseWav(readFileSync(join(ROOT, 'fixtures/vad', f)), 16_000, f).pcm

/** 20 s: one utterance (3.5 s, speech from 1 s) then quiet room noise, played forwards and back. */
function cycleWav(): Uint8Array {
  const speech = vad('speech-en-us-m.wav')
  const noise = new Int16Array(vad('noise-room.wav').slice().buffer)
  const pcm = new Int16Array(CYCLE_S * 16_000)
  pcm.set(new Int16Array(speech.slice().buffer), 0)
  for (let i = speech.byteLength / 2, k = 0; i < pcm.length; i++, k++) {
    const n = noise.length
    const j = k % n
    pcm[i] = noise[Math.floor(k / n) % 2 ? n - 1 - j : j] as number
  }
  const bytes = new Uint8Array(pcm.buffer)
  return Buffer.concat([wavHeader(16_000, bytes.byteLength), bytes])
}

const work = mkdtempSync(join(tmpdir(), 'nocturn-bench-soak20-'))
const inputWav = join(work, 'household.wav')
writeFileSync(inputWav, cycleWav())
// Every connection: hear the person, answer in one short sentence, done.
const server = await FakeLiveServer.start({
  logger: silentLogger,
  scripts: () => ({
    steps: [
      { waitFor: 'realtimeInput', timeoutMs: 20_000 },
      { delayMs: 800 },
      { send: { serverContent: { inputTranscription: { text: 'Hello there.' } } } },
      { speak: 'hello' },
      { send: { serverContent: { turnComplete: true } } },
    ],
  }),
})
const hasDist = existsSync(join(ROOT, 'dist/app/appliance.js'))
const base = hasDist ? 'dist' : 'src'
const child = spawn(
  process.execPath,
  [...(hasDist ? [] : ['--import', 'tsx']), join(ROOT, 'bench/soak/child.mjs')],
  {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      NOCTURN_BENCH_SOAK: JSON.stringify({
        base,
        model: MODEL,
        baseUrl: server.baseUrl,
        work,
        inputWav,
        minutes: MINUTES,
        idleSeconds: 3,
      }),
    },
  },
)
interface Line {
  kind: string
  t?: number
  rss: number
  p99?: number
  max?: number
  reason?: string
}
const lines: Line[] = []
let warnLines = 0
createInterface({ input: child.stdout }).on('line', (l) => {
  try {
    lines.push(JSON.parse(l) as Line)
  } catch {}
})
createInterface({ input: child.stderr }).on('line', () => {
  warnLines++
})
const loads = [loadavg()[0]]
const loadTimer = setInterval(() => loads.push(loadavg()[0]), 60_000)
out(`  soak: ${MINUTES} min on ${base}/, an utterance every ${CYCLE_S} s`)
await new Promise((r) => child.on('close', r))
clearInterval(loadTimer)
await server.close()

const sessions = lines.filter((l) => l.kind === 'session')
const rss = lines.filter((l) => l.rss).map((l) => l.rss / 1e6)
const p99s = sessions.map((x) => x.p99 as number).sort((a, b) => a - b)
const maxes = sessions.map((x) => x.max as number).sort((a, b) => a - b)
const done = lines.find((l) => l.kind === 'done')
const utterances = Math.floor((MINUTES * 60) / CYCLE_S)
const f1 = (n: number) => n.toFixed(1)
out('')
out(
  `machine: ${machineLine()}; load average (1 min) during the run: ${loads.map((l) => l?.toFixed(1)).join(', ')}`,
)
out('')
out('| measure | value |')
out('|---|---|')
out(`| utterances played | ${utterances} |`)
out(
  `| sessions opened (and closed) | ${sessions.length} (${[...new Set(sessions.map((x) => x.reason))].join(', ')}) |`,
)
out(`| Live connections | ${server.connections.length} |`)
out(
  `| RSS after start / max / at the end, MB | ${f1(rss[0] ?? Number.NaN)} / ${f1(Math.max(...rss))} / ${f1((done?.rss ?? Number.NaN) / 1e6)} |`,
)
out(
  `| loop delay p99 per session: median / worst, ms | ${f1(quantile(p99s, 0.5))} / ${f1(p99s.at(-1) ?? Number.NaN)} |`,
)
out(
  `| loop delay max per session: median / worst, ms | ${f1(quantile(maxes, 0.5))} / ${f1(maxes.at(-1) ?? Number.NaN)} |`,
)
out(
  `| loop delay p99 / max over the whole run, ms | ${f1(done?.p99 ?? Number.NaN)} / ${f1(done?.max ?? Number.NaN)} |`,
)
out(`| log lines at warn or above | ${warnLines} |`)
