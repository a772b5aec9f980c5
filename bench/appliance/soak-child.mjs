// The appliance alone, for the memory soak of appliance.bench.ts: started by the benchmark in a
// process of its own, pointed at the world the benchmark runs (broker, fake Live service, phone).
// Plain JavaScript so it runs on the compiled `dist/` exactly as the device does (no loader); with
// `--import tsx` and base "src" it runs the sources instead.
//
// Reads its settings from NOCTURN_BENCH_SOAK (JSON). Prints JSON lines on stdout: a `ready` line,
// a `sample` every sampleMs, a `gc` sample (heap after a forced full collection) every gcEveryMs,
// and a final `done` line with the session counts.
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'

const s = JSON.parse(process.env.NOCTURN_BENCH_SOAK ?? '{}')
const base = new URL(`../../${s.base}/`, import.meta.url)
const mod = (p) => import(new URL(p, base).href)
const [{ parseConfig }, { startAppliance }, { createLogger }] = await Promise.all([
  mod('app/config/load.js'),
  mod('app/appliance.js'),
  mod('app/logger.js'),
])
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`)
const logger = createLogger({ level: process.env.NOCTURN_LOG_LEVEL ?? 'warn', destination: process.stderr })

const loaded = parseConfig(
  JSON.stringify({
    provider: { model: s.model, textModel: 'gemini-3.5-flash', baseUrl: s.baseUrl },
    audio: { backend: 'wav', inputWav: s.inputWav, outputWav: `${s.work}/speaker.wav` },
    mqtt: { url: s.brokerUrl, deviceId: s.device },
    phonesDir: s.phonesDir,
    store: { path: `${s.work}/nocturn.db` },
    // One session for the whole soak (it must outlast the run and never go idle), unless a
    // session budget is given: then sessions end on it and the next speech opens another.
    session: {
      budgetMinutes: s.sessionMinutes ?? Math.min(240, Math.ceil(s.minutes) + 5),
      idleTimeoutSeconds: 3600,
      approvalTimeoutSeconds: 30,
    },
    homeActions: [
      {
        name: 'unlock_front_door',
        description: 'Unlocks the front door.',
        says: 'unlock the front door',
        topic: 'home/front-door/set',
        payload: { state: 'UNLOCK' },
        critical: true,
      },
    ],
  }),
  'soak config',
  { GEMINI_API_KEY: 'offline-soak-key' },
)

const sessions = []
const states = {}
const appliance = await startAppliance({
  loaded,
  logger,
  wavPaced: true,
  wavLoop: true,
  onSessionEnd: (summary) => sessions.push(summary),
  onState: (st) => {
    states[st] = (states[st] ?? 0) + 1
  },
})
const t0 = performance.now()
/** Linux: how much of the RSS is anonymous memory and how much is mapped files (the binary). */
const rssParts = () => {
  try {
    const status = readFileSync('/proc/self/status', 'utf8')
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024
    return { rssAnon: kb('RssAnon'), rssFile: kb('RssFile') }
  } catch {
    return {}
  }
}
const mem = () => {
  const m = process.memoryUsage()
  return {
    ...rssParts(),
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  }
}
const elapsed = () => Math.round(performance.now() - t0)
emit({ kind: 'ready', t: 0, listeningAtMs: Math.round(t0), ...mem() })
const cpu0 = process.cpuUsage()

const sample = () => emit({ kind: 'sample', t: elapsed(), ...mem() })
const gcSample = () => {
  if (typeof globalThis.gc !== 'function') return
  globalThis.gc()
  emit({ kind: 'gc', t: elapsed(), ...mem() })
}
// For hunting a leak: heap snapshots at these times (ms after listening) into snapshotDir.
for (const at of s.snapshotDir ? (s.snapshotsAtMs ?? []) : []) {
  setTimeout(async () => {
    const { writeHeapSnapshot } = await import('node:v8')
    globalThis.gc?.()
    writeHeapSnapshot(`${s.snapshotDir}/heap-${at}.heapsnapshot`)
  }, at)
}
const sampler = setInterval(sample, s.sampleMs)
const gcTimer = setInterval(gcSample, s.gcEveryMs)

await new Promise((r) => setTimeout(r, s.minutes * 60_000))
clearInterval(sampler)
clearInterval(gcTimer)
sample()
gcSample()
const cpu = process.cpuUsage(cpu0)
const runningSession = appliance.driver.sessionRunning
// What `nocturn run` does on SIGTERM: close the appliance. Watch whether it returns while the
// session is still open; if not, end the session first, as a way out.
const closing = appliance.close().then(() => 'closed')
const closeOutcome = await Promise.race([
  closing,
  new Promise((r) => setTimeout(() => r('hung'), s.closeWaitMs ?? 5000)),
])
if (closeOutcome === 'hung') {
  await appliance.driver.stop()
  await closing
}
emit({
  kind: 'done',
  t: elapsed(),
  cpuMs: Math.round((cpu.user + cpu.system) / 1000),
  sessionsEnded: sessions.map((x) => ({
    reason: x.reason,
    turns: x.turns,
    calls: x.calls,
    messagesWritten: x.messagesWritten,
    resumptions: x.resumptions,
    freshConnections: x.freshConnections,
  })),
  sessionWasRunning: runningSession,
  closeWithSessionOpen: closeOutcome,
  states,
})
process.exit(0)
