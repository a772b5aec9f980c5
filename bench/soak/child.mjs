// The appliance alone for soak.bench.ts, in a process of its own: hears a household that speaks
// every 20 s (a looping WAV), opens a session per utterance against the fake Live service, and
// reports per session the event loop's delay (p99, max, via perf_hooks' histogram, reset when a
// session opens) and the RSS when it closed. Plain JavaScript so it runs the compiled `dist/`
// as on the device, or the sources with `--import tsx` (base "src").
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'

const s = JSON.parse(process.env.NOCTURN_BENCH_SOAK ?? '{}')
const base = new URL(`../../${s.base}/`, import.meta.url)
const mod = (p) => import(new URL(p, base).href)
const [{ parseConfig }, { startAppliance }, { createLogger }] = await Promise.all([
  mod('app/config/load.js'),
  mod('app/appliance.js'),
  mod('app/logger.js'),
])
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`)
const logger = createLogger({ level: 'warn', destination: process.stderr })
const loaded = parseConfig(
  JSON.stringify({
    provider: { model: s.model, baseUrl: s.baseUrl },
    audio: { backend: 'wav', inputWav: s.inputWav, outputWav: `${s.work}/speaker.wav` },
    phonesDir: `${s.work}/phones`,
    store: { path: `${s.work}/nocturn.db` },
    session: { idleTimeoutSeconds: s.idleSeconds },
  }),
  'soak config',
  { GEMINI_API_KEY: 'offline-soak-key' },
)
const loop = monitorEventLoopDelay({ resolution: 1 })
loop.enable()
const whole = monitorEventLoopDelay({ resolution: 1 })
whole.enable()
let openedAt = 0
const t0 = performance.now()
const ms = (ns) => Math.round(ns / 1e4) / 100
const appliance = await startAppliance({
  loaded,
  logger,
  wavPaced: true,
  wavLoop: true,
  onState: (st) => {
    if (st === 'listening' && openedAt === 0) {
      openedAt = performance.now()
      loop.reset()
    }
  },
  onSessionEnd: (x) => {
    emit({
      kind: 'session',
      t: Math.round(performance.now() - t0),
      reason: x.reason,
      turns: x.turns,
      lastedMs: Math.round(performance.now() - openedAt),
      p99: ms(loop.percentile(99)),
      max: ms(loop.max),
      rss: process.memoryUsage().rss,
    })
    openedAt = 0
    loop.reset()
  },
})
emit({ kind: 'ready', rss: process.memoryUsage().rss })
const sampler = setInterval(() => emit({ kind: 'sample', t: Math.round(performance.now() - t0), rss: process.memoryUsage().rss }), 10_000)
await new Promise((r) => setTimeout(r, s.minutes * 60_000))
clearInterval(sampler)
emit({ kind: 'done', p99: ms(whole.percentile(99)), max: ms(whole.max), rss: process.memoryUsage().rss })
await appliance.close()
process.exit(0)
