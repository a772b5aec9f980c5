// The voice driver under load: 60 s of full-duplex audio at real-time rate (20 ms microphone
// frames out, 40 ms model chunks into the speaker) while 200 gated calls wait for a phone and
// transcript messages are written to SQLite. Reports event-loop delay and the CPU the driver costs
// per second of audio. Targets (issue 3): p99 delay ≤ 5 ms, driver CPU ≤ 1 % of a core.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { realClock } from '../src/adapters/clock/real-clock.js'
import { SqliteStore } from '../src/adapters/sqlite/sqlite-store.js'
import { MicGate } from '../src/audio/mic-gate.js'
import { Gate } from '../src/core/gate.js'
import { Grants } from '../src/core/grants.js'
import { silentLogger } from '../src/core/logger.js'
import { defaultPersona } from '../src/core/persona.js'
import { ToolSet } from '../src/core/tool-set.js'
import { ManualApprover } from '../src/testing/approvers.js'
import { DemoLock } from '../src/testing/demo-tools.js'
import { type FakeLiveConnection, FakeLiveLLM, modelPcm } from '../src/testing/fake-live-llm.js'
import { FakeMic } from '../src/testing/fake-mic.js'
import { FakeSpeaker } from '../src/testing/fake-speaker.js'
import { VoiceDriver } from '../src/voice/voice-driver.js'
import { machineLine } from './machine.js'

const SECONDS = Number(process.env.VOICE_BENCH_SECONDS ?? 60)
const BASELINE_SECONDS = Math.max(5, Math.round(SECONDS / 3))
const PENDING_CALLS = 200
const MIC_FRAME_MS = 20
const MODEL_CHUNK_MS = 40
const clock = realClock()

/** Calls `tick(n)` every `periodMs` at real-time rate, correcting for drift, for `seconds`. */
function paced(periodMs: number, seconds: number, tick: (n: number) => void): Promise<void> {
  const total = Math.round((seconds * 1000) / periodMs)
  const t0 = performance.now()
  return new Promise((resolve) => {
    let n = 0
    const step = () => {
      tick(n)
      n++
      if (n >= total) return resolve()
      setTimeout(step, Math.max(0, t0 + n * periodMs - performance.now()))
    }
    step()
  })
}

/** Same pacing, same buffers, no driver: what the harness itself costs. */
async function baseline(): Promise<number> {
  const frame = new Uint8Array(640).fill(9)
  const chunk = modelPcm(MODEL_CHUNK_MS)
  let sink = 0
  // The delay monitor wakes the loop every millisecond: it runs here too, so it cancels out.
  const h = monitorEventLoopDelay({ resolution: 1 })
  h.enable()
  const cpu0 = process.cpuUsage()
  await Promise.all([
    paced(MIC_FRAME_MS, BASELINE_SECONDS, () => {
      sink += frame[0] ?? 0
    }),
    paced(MODEL_CHUNK_MS, BASELINE_SECONDS, () => {
      sink += chunk[0] ?? 0
    }),
  ])
  const cpu = process.cpuUsage(cpu0)
  h.disable()
  if (sink < 0) console.log(sink)
  return (cpu.user + cpu.system) / 1000 / BASELINE_SECONDS
}

async function run() {
  const store = new SqliteStore(join(mkdtempSync(join(tmpdir(), 'nocturn-bench-')), 'v.db'))
  const approver = new ManualApprover() // never answers: every call stays pending
  const gate = new Gate({
    policies: {},
    approver,
    grants: new Grants(store),
    clock,
    approvalTimeoutMs: 3_600_000,
  })
  const speaker = new FakeSpeaker(clock)
  const source = new FakeMic()
  const mic = new MicGate({ source, speaker, clock, echo: 'aec', tailMs: 300 })
  const llm = new FakeLiveLLM()
  const driver = new VoiceDriver({
    llm,
    tools: new ToolSet([new DemoLock().tool()]),
    gate,
    store,
    persona: defaultPersona,
    clock,
    logger: silentLogger,
    mic,
    speaker,
    options: { budgetMs: 3_600_000, idleMs: 3_600_000 },
  })
  const session = driver.runSession()
  await new Promise((r) => setImmediate(r))
  const conn: FakeLiveConnection = llm.current
  for (let i = 0; i < PENDING_CALLS; i++) {
    conn.toolCall({ id: `c${i}`, name: 'unlock_door', args: { door: i % 2 ? 'front' : 'back' } })
  }
  await new Promise((r) => setTimeout(r, 50))
  const interims = conn.responses.filter((r) => r.willContinue).length

  const frame = new Uint8Array(640).fill(9)
  const chunk = modelPcm(MODEL_CHUNK_MS)
  let inDriverNs = 0n
  let maxInDriverNs = 0n
  const timed = (fn: () => void) => {
    const t = process.hrtime.bigint()
    fn()
    const d = process.hrtime.bigint() - t
    inDriverNs += d
    if (d > maxInDriverNs) maxInDriverNs = d
  }
  const h = monitorEventLoopDelay({ resolution: 1 })
  const conversationId = store.listConversations()[0]?.id ?? ''
  const writesBefore = store.messages(conversationId).length
  h.enable()
  const cpu0 = process.cpuUsage()
  await Promise.all([
    paced(MIC_FRAME_MS, SECONDS, () => timed(() => source.sink?.frame(frame, clock.now()))),
    paced(MODEL_CHUNK_MS, SECONDS, (n) =>
      timed(() => {
        conn.events.audio(chunk)
        // Every two seconds an exchange: words both ways, a turn, transcript writes.
        if (n % 50 === 10) conn.user('Could you turn the hallway light down a little?')
        if (n % 50 === 20)
          conn.model('Of course, I have dimmed the hallway light to forty percent.')
        if (n % 50 === 30) conn.turnComplete()
      }),
    ),
  ])
  const cpu = process.cpuUsage(cpu0)
  h.disable()
  const ms = (ns: number) => ns / 1e6
  const cpuPerSec = (cpu.user + cpu.system) / 1000 / SECONDS
  const messages = store.messages(conversationId).length - writesBefore
  const stillPending = approver.asked.filter((a) => !a.withdrawn).length
  await driver.stop()
  await session
  store.close()
  return {
    interims,
    frames: conn.audioFrames,
    played: speaker.playedMs(),
    messages,
    stillPending,
    maxInDriverMs: Number(maxInDriverNs) / 1e6,
    p50: ms(h.percentile(50)),
    p99: ms(h.percentile(99)),
    max: ms(h.max),
    cpuPerSec,
    inDriverPerSec: Number(inDriverNs) / 1e6 / SECONDS,
  }
}

// The harness alone runs after the driver so both run on warmed-up code.
const r = await run()
const base = await baseline()
const driverCpu = r.cpuPerSec - base
console.log(machineLine())
console.log(
  `${SECONDS} s of audio · ${r.frames} mic frames sent · ${PENDING_CALLS} gated calls (${r.interims} interim answers, ${r.stillPending} still pending at the end) · ${r.messages} transcript messages written during the run`,
)
console.table({
  'event-loop delay': {
    'p50 ms': +r.p50.toFixed(3),
    'p99 ms': +r.p99.toFixed(3),
    'max ms': +r.max.toFixed(3),
  },
})
console.log(
  `process CPU ${r.cpuPerSec.toFixed(2)} ms per s of audio; harness alone ${base.toFixed(2)} ms/s; ` +
    `driver ${driverCpu.toFixed(2)} ms/s = ${(driverCpu / 10).toFixed(3)} % of a core`,
)
console.log(
  `time inside driver callbacks (audio path + events + transcript writes, fakes included): ` +
    `${r.inDriverPerSec.toFixed(3)} ms per s of audio = ${(r.inDriverPerSec / 10).toFixed(3)} % of a core; ` +
    `longest single callback ${r.maxInDriverMs.toFixed(3)} ms`,
)
