// A flood of junk on the device's decision topic (issue: the watchdog killed a device 14 500
// messages into a 20 000-message flood): the event loop's delay (p50/p99/max) while 20 000 bogus
// decisions arrive through a real Mosquitto, idle and with two CPU hogs the bench starts and stops
// itself; and that the real approval pending meanwhile still goes through. The device logs with
// its real (pino) logger to a file, as it would to the journal. A Pi Zero 2 W is ~4× slower.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { realClock } from '../src/adapters/clock/real-clock.js'
import { SqliteStore } from '../src/adapters/sqlite/sqlite-store.js'
import { createLogger } from '../src/app/logger.js'
import { Gate } from '../src/core/gate.js'
import { Grants } from '../src/core/grants.js'
import type { CallContext, Tool } from '../src/core/types.js'
import { DeviceState } from '../src/device/device-state.js'
import { PhoneClient } from '../src/phone/client.js'
import { freePort, mosquittoBroker, PREFIX, USERS } from '../test/helpers/brokers.js'
import { testDesk, testDeviceMqtt, testPhoneLink } from '../test/helpers/device-mqtt.js'
import { missingCommands } from '../test/helpers/system.js'
import { machineLine } from './machine.js'

const FLOOD = 20_000
const ROOT = join(import.meta.dirname, '..')

if (missingCommands('mosquitto', 'mosquitto_passwd')) process.exit(0)

/** The flooder runs in its own process, so its sending does not count against our loop. */
const FLOODER = `
import mqtt from 'mqtt'
import { randomUUID } from 'node:crypto'
const [url, user, pass, topicOf, id, n] = process.argv.slice(1)
const c = await mqtt.connectAsync(url, { username: user, password: pass, reconnectPeriod: 0 })
const kinds = [
  () => '{not json',
  () => JSON.stringify({ v: 1, id, decision: 'approve', grant: 'once', phone: 'anna', at: Date.now(), nonce: randomUUID().replaceAll('-', ''), mac: 'a'.repeat(64) }),
  () => JSON.stringify({ v: 1, id, decision: 'approve', grant: 'once', phone: 'mallory', at: Date.now(), nonce: randomUUID().replaceAll('-', ''), mac: 'b'.repeat(64) }),
  () => JSON.stringify({ v: 1, id: 'x', decision: 'deny', grant: 'once', phone: 'anna', at: 0, nonce: 'n'.repeat(16), mac: 'c'.repeat(64) }),
]
for (let i = 0; i < Number(n); i += 500) {
  const burst = []
  for (let j = i; j < i + 500; j++) {
    const t = topicOf.replace('ID', j % 4 === 3 ? 'x' : id)
    burst.push(c.publishAsync(t, kinds[j % 4](), { qos: 0 }))
  }
  await Promise.all(burst)
}
await c.endAsync()
`

function hog(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' })
}

async function run(hogs: number) {
  const broker = mosquittoBroker(await freePort())
  await broker.start()
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-flood-'))
  const logFile = join(dir, 'device.log')
  const dest = createWriteStream(logFile)
  const logger = createLogger({ destination: dest, level: 'info' })
  const keys = new Map([['anna', randomBytes(32)]])
  // The device's state counts the refusals, as the appliance wires it.
  const state = new DeviceState()
  const device = testDeviceMqtt(broker.url, 'flood', () => keys, { logger, device: state })
  await device.approver.ready()
  const phone = new PhoneClient({
    link: testPhoneLink,
    pairing: {
      broker: broker.url,
      device: 'flood',
      prefix: PREFIX,
      phone: 'anna',
      key: keys.get('anna')!,
    },
    ...USERS.anna,
    logger: createLogger({ destination: createWriteStream('/dev/null') }),
  })
  await phone.start()
  const store = new SqliteStore(':memory:')
  const gate = new Gate({
    policies: {},
    approver: testDesk(device),
    grants: new Grants(store),
    clock: realClock(),
    approvalTimeoutMs: 300_000,
  })
  const tool: Tool = {
    name: 'unlock_door',
    description: 'bench',
    parameters: { type: 'object', properties: {} },
    describe: () => 'unlock the front door',
    async call() {
      return null
    },
  }
  const ctx: CallContext = {
    signal: new AbortController().signal,
    channel: 'voice',
    conversationId: 'c',
    callId: 'c',
    gate,
    logger,
    onPending: () => {},
  }
  const ids: string[] = []
  phone.on((e) => {
    if (e.kind === 'pending') ids.push(e.request.id)
  })
  const call = gate.check(tool, {}, ctx)
  while (ids.length === 0) await new Promise((r) => setTimeout(r, 10))
  const id = ids[0] as string

  const hogsRunning = Array.from({ length: hogs }, hog)
  await new Promise((r) => setTimeout(r, 500))
  const h = monitorEventLoopDelay({ resolution: 5 })
  h.enable()
  const t0 = Date.now()
  const flooder = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      FLOODER,
      broker.url,
      USERS.intruder.username,
      USERS.intruder.password,
      device.approver.topics.decision('ID'),
      id,
      String(FLOOD),
    ],
    { cwd: ROOT, stdio: 'inherit' },
  )
  const total = () => Object.values(state.snapshot.refused.decisions).reduce((a, b) => a + b, 0)
  const deadline = Date.now() + 180_000
  while (total() < FLOOD && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  const floodMs = Date.now() - t0
  h.disable()
  await new Promise((r) => (flooder.exitCode === null ? flooder.once('exit', r) : r(null)))
  // The real approval still goes through after the flood.
  const a0 = Date.now()
  await phone.decide(id, 'approve')
  await call
  const approveMs = Date.now() - a0
  for (const p of hogsRunning) p.kill('SIGKILL')
  device.approver.flushRejections()
  await phone.close()
  await device.close()
  store.close()
  await broker.stop()
  await new Promise((r) => dest.end(r))
  const lines = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('decision rejected')).length
  rmSync(dir, { recursive: true, force: true })
  const ms = (ns: number) => (ns / 1e6).toFixed(1)
  return {
    hogs,
    handled: total(),
    floodMs,
    p50: ms(h.percentile(50)),
    p99: ms(h.percentile(99)),
    max: ms(h.max),
    lines,
    approveMs,
  }
}

console.log(machineLine())
/** The same monitor with no flood: how much of the delay is the machine itself. */
async function baseline(hogs: number) {
  const running = Array.from({ length: hogs }, hog)
  await new Promise((r) => setTimeout(r, 500))
  const h = monitorEventLoopDelay({ resolution: 5 })
  h.enable()
  await new Promise((r) => setTimeout(r, 5000))
  h.disable()
  for (const p of running) p.kill('SIGKILL')
  const ms = (ns: number) => (ns / 1e6).toFixed(1)
  return `| ${hogs} (no flood, 5 s) | – | – | ${ms(h.percentile(50))} | ${ms(h.percentile(99))} | ${ms(h.max)} | – | – |`
}
const base = [await baseline(0), await baseline(2)]
const rows = [await run(0), await run(2)]
console.log(
  `\n| CPU hogs | junk decisions handled | flood took ms | loop delay p50 ms | p99 ms | max ms | "decision rejected" log lines | approve after flood ms |\n|---|---|---|---|---|---|---|---|\n${rows
    .map(
      (r) =>
        `| ${r.hogs} | ${r.handled} | ${r.floodMs} | ${r.p50} | ${r.p99} | ${r.max} | ${r.lines} | ${r.approveMs} |`,
    )
    .join('\n')}\n${base.join('\n')}`,
)
