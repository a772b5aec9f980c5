// Conversations on the phone through a real Mosquitto on loopback: the latency from the phone
// sending a signed request to it holding every verified answer, for listing 50 conversations and
// for reading a 500-message conversation (targets: median ≤ 20 ms and ≤ 50 ms). And the store's
// size per hour of speech, from a synthetic hour of transcripts (how: see `syntheticHour`).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { realClock } from '../src/adapters/clock/real-clock.js'
import { PhoneRequests } from '../src/adapters/mqtt/phone-requests.js'
import { SqliteStore } from '../src/adapters/sqlite/sqlite-store.js'
import { createConversationEndpoint } from '../src/conversations/conversation-endpoint.js'
import { ConversationService } from '../src/conversations/conversation-service.js'
import { serveGrants } from '../src/conversations/grants-endpoint.js'
import { LiveConversations } from '../src/conversations/live-conversations.js'
import { PhoneGrants } from '../src/conversations/phone-grants.js'
import { TranscriptFeed } from '../src/conversations/transcript-feed.js'
import { Gate } from '../src/core/gate.js'
import { Grants } from '../src/core/grants.js'
import { silentLogger } from '../src/core/logger.js'
import { defaultPersona } from '../src/core/persona.js'
import { ToolSet } from '../src/core/tool-set.js'
import { PhoneConversations } from '../src/phone/conversations.js'
import type { TranscriptStore } from '../src/ports/transcript-store.js'
import { ManualApprover } from '../src/testing/approvers.js'
import { ScriptedLLM } from '../src/testing/scripted-llm.js'
import { VirtualClock } from '../src/testing/virtual-clock.js'
import { TurnLoop } from '../src/turn/turn-loop.js'
import { freePort, mosquittoBroker, PREFIX, USERS } from '../test/helpers/brokers.js'
import { testDeviceMqtt, testPhoneLink } from '../test/helpers/device-mqtt.js'
import { missingCommands } from '../test/helpers/system.js'
import { machineLine, quantile } from './machine.js'

const RUNS = 300
const WARMUP = 30

const skip = missingCommands('mosquitto', 'mosquitto_passwd')
if (skip) {
  process.stdout.write(`skipped: ${skip}\n`)
  process.exit(0)
}

// A deterministic word stream with English-like word lengths (mean ≈ 4.7 letters).
const WORDS =
  'the a to and of is it you that in for on this with be can what I light kitchen door timer minutes set please today weather tomorrow morning evening music play turn off on lock front back garden rain warm cold remind me call mum dinner ready how long until bedtime'.split(
    ' ',
  )
let seed = 42
const rnd = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}
const sentence = (words: number) => {
  const w = Array.from({ length: words }, () => WORDS[Math.floor(rnd() * WORDS.length)])
  const s = w.join(' ')
  return `${s.charAt(0).toUpperCase()}${s.slice(1)}.`
}

/**
 * One hour of speech as it is stored: an exchange every 15 s (240 an hour) of a 12-word question
 * and a 25-word spoken answer — 37 words per 15 s is ≈ 150 words a minute, a normal speaking rate
 * with both sides talking all hour, so an upper bound for a speaker in a room. Every fifth
 * exchange calls a tool (a call record plus an outcome row with a small JSON result).
 */
function syntheticHour(store: TranscriptStore, start: number): { messages: number; chars: number } {
  const c = store.createConversation({ channel: 'voice', at: start })
  let messages = 0
  let chars = 0
  for (let i = 0; i < 240; i++) {
    const at = start + i * 15_000
    const q = sentence(12)
    store.append(c.id, { role: 'user', text: q, channel: 'voice', at })
    messages++
    chars += q.length
    if (i % 5 === 0) {
      const call = { id: `call-${i}`, name: 'set_timer', args: { minutes: 10, label: 'tea' } }
      store.append(c.id, {
        role: 'assistant',
        text: '',
        toolCalls: [call],
        channel: 'voice',
        at: at + 2000,
      })
      store.append(c.id, {
        role: 'tool',
        toolCallId: call.id,
        toolName: call.name,
        args: call.args,
        outcome: { ok: true, value: { id: `t-${i}`, endsAt: at + 600_000 } },
        channel: 'voice',
        at: at + 2100,
      })
      messages += 2
    }
    const a = sentence(25)
    store.append(c.id, {
      role: 'assistant',
      text: a,
      toolCalls: [],
      channel: 'voice',
      at: at + 3000,
    })
    messages++
    chars += a.length
  }
  return { messages, chars }
}

function fileBytes(path: string): number {
  let total = 0
  for (const f of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      total += statSync(f).size
    } catch {
      // absent: nothing to count
    }
  }
  return total
}

const dir = mkdtempSync(join(tmpdir(), 'nocturn-bench-conv-'))

// --- store size per hour of speech ---
const sizes: { hours: number; bytes: number; messages: number; chars: number }[] = []
{
  const path = join(dir, 'size.db')
  const store = new SqliteStore(path)
  store.vacuum()
  const empty = fileBytes(path)
  let messages = 0
  let chars = 0
  for (let h = 1; h <= 10; h++) {
    const r = syntheticHour(store, Date.UTC(2026, 0, 1) + h * 3_600_000)
    messages += r.messages
    chars += r.chars
    if (h === 1 || h === 10) {
      store.vacuum()
      sizes.push({ hours: h, bytes: fileBytes(path) - empty, messages, chars })
    }
  }
  store.close()
}

// --- latency through Mosquitto ---
const broker = mosquittoBroker(await freePort())
await broker.start()
const keys = new Map([['anna', randomBytes(32)]])
const device = testDeviceMqtt(broker.url, 'bench', () => keys)
await device.connection.ready()
const store = new SqliteStore(join(dir, 'latency.db'))
const feed = new TranscriptFeed(store, silentLogger)
const clock = new VirtualClock(Date.now())
const gate = new Gate({
  policies: {},
  approver: new ManualApprover(),
  grants: new Grants(store),
  clock,
  approvalTimeoutMs: 1000,
})
const turns = new TurnLoop({
  llm: new ScriptedLLM([]),
  tools: new ToolSet([]),
  gate,
  store: feed,
  persona: defaultPersona,
  clock,
  logger: silentLogger,
})
const service = new ConversationService({
  store: feed,
  turns,
  live: new LiveConversations(),
  clock,
  logger: silentLogger,
})
const requests = new PhoneRequests({
  connection: device.connection,
  phones: () => keys,
  deviceId: 'bench',
  prefix: PREFIX,
  logger: silentLogger,
  clock: realClock(),
})
const conversations = createConversationEndpoint({ requests, service, feed, clock: realClock() })
serveGrants(requests, new PhoneGrants({ grants: gate.grants, clock, logger: silentLogger }))
await requests.ready()
// 60 conversations of 10–30 messages, and one long one of 500.
for (let i = 0; i < 60; i++) {
  const c = store.createConversation({ channel: i % 3 ? 'voice' : 'text', at: 1000 + i })
  const n = 10 + Math.floor(rnd() * 20)
  for (let j = 0; j < n; j++) {
    store.append(c.id, {
      role: 'user',
      text: sentence(12),
      channel: 'voice',
      at: 2000 + i * 100 + j,
    })
  }
}
const long = store.createConversation({ channel: 'voice', at: 500 })
for (let j = 0; j < 500; j++) {
  const at = 600 + j
  if (j % 2 === 0) store.append(long.id, { role: 'user', text: sentence(12), channel: 'voice', at })
  else {
    store.append(long.id, {
      role: 'assistant',
      text: sentence(25),
      toolCalls: [],
      channel: 'voice',
      at,
    })
  }
}

const phone = new PhoneConversations({
  link: testPhoneLink,
  pairing: {
    broker: broker.url,
    device: 'bench',
    prefix: PREFIX,
    phone: 'anna',
    key: keys.get('anna') as Buffer,
  },
  ...USERS.anna,
  logger: silentLogger,
})
await phone.start()

async function measure(what: () => Promise<unknown>): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const t0 = process.hrtime.bigint()
    await what()
    const t = Number(process.hrtime.bigint() - t0) / 1e6
    if (i >= WARMUP) ms.push(t)
  }
  return ms.sort((a, b) => a - b)
}

const listed = await phone.list({ limit: 50 })
if (listed.conversations.length !== 50) throw new Error('list did not return 50')
const shown = await phone.show(long.id, { limit: 500 })
if (shown.messages.length !== 500) throw new Error('show did not return 500')
const { replies: listReplies } = await phone.request('list', { limit: 50 })
const { replies: showReplies } = await phone.request('show', { conversation: long.id, limit: 500 })

const listMs = await measure(() => phone.list({ limit: 50 }))
const showMs = await measure(() => phone.show(long.id, { limit: 500 }))

await phone.close()
conversations.close()
requests.close()
await device.close()
store.close()
await broker.stop()
rmSync(dir, { recursive: true, force: true })

const row = (name: string, ms: number[], replies: number) =>
  `| ${name} | ${RUNS} | ${replies} | ${quantile(ms, 0.5).toFixed(2)} | ${quantile(ms, 0.95).toFixed(2)} | ${quantile(ms, 0.99).toFixed(2)} | ${(ms.at(-1) ?? 0).toFixed(2)} |`
const hour = sizes[0]
const ten = sizes[1]
const kib = (b: number) => (b / 1024).toFixed(0)
const out = [
  `## Conversations on the phone (conversations.bench.ts)`,
  '',
  `${machineLine()} · \`npm run bench -- conversations\``,
  '',
  'Through a real Mosquitto on loopback (per-phone ACL, TCP_NODELAY), the reference phone client',
  'timing from publishing a signed request to holding every verified answer; the device reads a',
  `SQLite file store of 61 conversations. ${WARMUP} warm-up runs, then ${RUNS} measured.`,
  '',
  '| request | runs | replies per answer | p50 ms | p95 ms | p99 ms | max ms |',
  '|---|---|---|---|---|---|---|',
  row('list 50 conversations', listMs, listReplies.length),
  row('show a 500-message conversation', showMs, showReplies.length),
  '',
  `Targets: list median ≤ 20 ms — ${quantile(listMs, 0.5) <= 20 ? 'met' : 'NOT met'}; read 500 median ≤ 50 ms — ${quantile(showMs, 0.5) <= 50 ? 'met' : 'NOT met'}.`,
  '',
  `Store size per hour of speech: ${kib(hour?.bytes ?? 0)} KiB after one synthetic hour (${hour?.messages} messages, ${hour?.chars} characters of transcript), ${kib((ten?.bytes ?? 0) / 10)} KiB per hour averaged over ten (file + WAL after VACUUM, minus the empty store).`,
  'The synthetic hour: an exchange every 15 s — a 12-word question, a 25-word spoken answer, ≈ 150',
  'words a minute with both sides talking all hour (an upper bound for a room speaker) — and a tool',
  'call with its outcome every fifth exchange. A household speaking one hour a day would keep about',
  `${((((ten?.bytes ?? 0) / 10) * 365) / 2 ** 20).toFixed(0)} MiB a year before retention.`,
  '',
]
process.stdout.write(`${out.join('\n')}\n`)
