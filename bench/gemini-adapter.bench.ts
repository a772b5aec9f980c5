// CPU the Gemini live adapter spends per second of audio, both ways, measured in this process
// while the far side (a fake live server) runs in another: received 24 kHz audio (JSON parse,
// base64 decode to PCM, events) and sent 16 kHz audio (base64, the SDK's frame, ws masking).
// Target: ≤ 1 % of one core each. Also the SDK's own `msg.data` getter, for comparison.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { LiveServerMessage } from '@google/genai'
import { realClock } from '../src/adapters/clock/real-clock.js'
import { GeminiLive } from '../src/adapters/gemini/gemini-live.js'
import { silentLogger } from '../src/core/logger.js'
import { defaultPersona } from '../src/core/persona.js'
import type { LiveEvents } from '../src/ports/live-llm.js'
import { machineLine } from './machine.js'

const SECONDS = 60
const CHUNK_MS = 40

const peer = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    join(import.meta.dirname, 'gemini-peer.ts'),
    String(SECONDS),
    String(CHUNK_MS),
  ],
  {
    stdio: ['pipe', 'pipe', 'inherit'],
  },
)
const [baseUrl] = (await once(createInterface({ input: peer.stdout }), 'line')) as [string]

function events(onTurnComplete: () => void, counter: { bytes: number }): LiveEvents {
  const nop = () => {}
  return {
    audio: (pcm) => {
      counter.bytes += pcm.length
    },
    inputTranscription: nop,
    outputTranscription: nop,
    interrupted: nop,
    generationComplete: nop,
    turnComplete: onTurnComplete,
    toolCall: nop,
    toolCallCancellation: nop,
    goAway: nop,
    resumptionUpdate: nop,
    usage: nop,
    closed: nop,
  }
}

const live = new GeminiLive({
  apiKey: 'bench',
  model: 'gemini-3.8-live',
  baseUrl,
  logger: silentLogger,
  clock: realClock(),
})
const setup = { persona: defaultPersona, tools: [], nonBlockingTools: false }
const frame20ms = new Uint8Array(640).map((_, i) => (i * 37) % 256)

// Receive.
const got = { bytes: 0 }
let done!: () => void
let finished = new Promise<void>((r) => {
  done = r
})
const rx = await live.open(
  setup,
  events(() => done(), got),
)
let cpu0 = process.cpuUsage()
let t0 = performance.now()
rx.sendAudio(frame20ms)
await finished
let cpu = process.cpuUsage(cpu0)
const rxWall = performance.now() - t0
const rxCpuMs = (cpu.user + cpu.system) / 1000
await rx.close()
if (got.bytes !== SECONDS * 48_000) throw new Error(`received ${got.bytes} bytes`)

// Send.
finished = new Promise<void>((r) => {
  done = r
})
const tx = await live.open(
  setup,
  events(() => done(), { bytes: 0 }),
)
cpu0 = process.cpuUsage()
t0 = performance.now()
const frames = (SECONDS * 1000) / 20
for (let i = 0; i < frames; i++) {
  tx.sendAudio(frame20ms)
  // Let the socket drain now and then, as a microphone's pace would.
  if (i % 50 === 0) await new Promise((r) => setImmediate(r))
}
await finished
cpu = process.cpuUsage(cpu0)
const txWall = performance.now() - t0
const txCpuMs = (cpu.user + cpu.system) / 1000
await tx.close()
peer.stdin.end()

// The SDK's getter, on the same frames: decode, re-encode, decode again (what we avoid).
const b64 = Buffer.alloc((CHUNK_MS * 48_000) / 1000, 7).toString('base64')
const n = (SECONDS * 1000) / CHUNK_MS
const msgs = Array.from({ length: n }, () =>
  Object.assign(new LiveServerMessage(), {
    serverContent: {
      modelTurn: { parts: [{ inlineData: { mimeType: 'audio/pcm;rate=24000', data: b64 } }] },
    },
  }),
)
let c0 = process.cpuUsage()
for (const m of msgs) Buffer.from(m.data ?? '', 'base64')
const sdkGetter = process.cpuUsage(c0)
c0 = process.cpuUsage()
for (const m of msgs)
  Buffer.from(m.serverContent?.modelTurn?.parts?.[0]?.inlineData?.data ?? '', 'base64')
const direct = process.cpuUsage(c0)

const pct = (ms: number) => ((ms / (SECONDS * 1000)) * 100).toFixed(3)
const ms = (u: { user: number; system: number }) => (u.user + u.system) / 1000
console.log(machineLine())
console.table({
  [`receive 24 kHz (${CHUNK_MS} ms frames)`]: {
    'audio s': SECONDS,
    'cpu ms': +rxCpuMs.toFixed(1),
    'wall ms': +rxWall.toFixed(0),
    '% of a core per audio s': +pct(rxCpuMs),
  },
  'send 16 kHz (20 ms frames)': {
    'audio s': SECONDS,
    'cpu ms': +txCpuMs.toFixed(1),
    'wall ms': +txWall.toFixed(0),
    '% of a core per audio s': +pct(txCpuMs),
  },
  'decode only: SDK msg.data getter': {
    'audio s': SECONDS,
    'cpu ms': +ms(sdkGetter).toFixed(1),
    'wall ms': 0,
    '% of a core per audio s': +pct(ms(sdkGetter)),
  },
  'decode only: Buffer.from(part)': {
    'audio s': SECONDS,
    'cpu ms': +ms(direct).toFixed(1),
    'wall ms': 0,
    '% of a core per audio s': +pct(ms(direct)),
  },
})
process.exit(0)
