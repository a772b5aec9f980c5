// Approval round trip through a real Mosquitto on loopback: from the gate asking to the gate
// resolving, with the reference phone client (its own process, approval-phone.ts) approving the
// moment a verified request appears. Also the device's share: the CPU time this process (the
// device: gate, approver, MQTT client; the phone and the broker run elsewhere) used per approval,
// read from outside its code with process.cpuUsage(). Target: median ≤ 5 ms, p99 ≤ 20 ms.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { realClock } from '../src/adapters/clock/real-clock.js'
import { SqliteStore } from '../src/adapters/sqlite/sqlite-store.js'
import { Gate } from '../src/core/gate.js'
import { Grants } from '../src/core/grants.js'
import { silentLogger } from '../src/core/logger.js'
import type { CallContext, Tool } from '../src/core/types.js'
import { freePort, mosquittoBroker, PREFIX, USERS } from '../test/helpers/brokers.js'
import { testDesk, testDeviceMqtt } from '../test/helpers/device-mqtt.js'
import { missingCommands } from '../test/helpers/system.js'
import { machineLine, quantile } from './machine.js'

const N = 1000
const WARMUP = 50

const skip = missingCommands('mosquitto', 'mosquitto_passwd')
if (skip) process.exit(0)

const broker = mosquittoBroker(await freePort())
await broker.start()
const keys = new Map([['anna', randomBytes(32)]])
const device = testDeviceMqtt(broker.url, 'bench', () => keys)
await device.approver.ready()
const phone = spawn(
  process.execPath,
  ['--import', 'tsx', join(import.meta.dirname, 'approval-phone.ts')],
  {
    stdio: ['pipe', 'pipe', 'inherit'],
  },
)
const pairing = {
  broker: broker.url,
  device: 'bench',
  prefix: PREFIX,
  phone: 'anna',
  key: keys.get('anna')!.toString('hex'),
  ...USERS.phone,
}
phone.stdin.write(`${JSON.stringify(pairing)}\n`)
await once(createInterface({ input: phone.stdout }), 'line')

const store = new SqliteStore(':memory:')
const gate = new Gate({
  policies: {},
  approver: testDesk(device),
  grants: new Grants(store),
  clock: realClock(),
  approvalTimeoutMs: 10_000,
})
const tool: Tool<{ n: number }> = {
  name: 'bench_tool',
  description: 'benchmark',
  parameters: { type: 'object', properties: { n: { type: 'number' } } },
  describe: (a) => `run benchmark step ${a.n}`,
  async call() {
    return null
  },
}
const ctx: CallContext = {
  signal: new AbortController().signal,
  channel: 'voice',
  conversationId: 'bench',
  callId: 'bench',
  gate,
  logger: silentLogger,
  onPending: () => {},
}

const total: number[] = []
const deviceShare: number[] = []
for (let i = 0; i < WARMUP + N; i++) {
  const cpu0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  await gate.check(tool as Tool, { n: i }, ctx)
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  const cpu = process.cpuUsage(cpu0)
  if (i >= WARMUP) {
    total.push(ms)
    deviceShare.push((cpu.user + cpu.system) / 1000)
  }
}
total.sort((a, b) => a - b)
deviceShare.sort((a, b) => a - b)
phone.stdin.end()
await once(phone, 'exit')
await device.close()
store.close()
await broker.stop()

const row = (xs: number[]) => ({
  n: xs.length,
  'p50 ms': +quantile(xs, 0.5).toFixed(3),
  'p99 ms': +quantile(xs, 0.99).toFixed(3),
  'max ms': +(xs.at(-1) ?? 0).toFixed(3),
})
console.log(machineLine())
console.table({
  'round trip (gate asks → gate resolves)': row(total),
  'device process CPU per approval': row(deviceShare),
})
const share = (quantile(deviceShare, 0.5) / quantile(total, 0.5)) * 100
console.log(`device share of the median: ${share.toFixed(1)}%`)
console.log(
  `\n| case | n | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|\n` +
    `| round trip (gate asks → gate resolves) | ${N} | ${quantile(total, 0.5).toFixed(3)} | ${quantile(total, 0.99).toFixed(3)} | ${(total.at(-1) ?? 0).toFixed(2)} |\n` +
    `| device process CPU per approval | ${N} | ${quantile(deviceShare, 0.5).toFixed(3)} | ${quantile(deviceShare, 0.99).toFixed(3)} | ${(deviceShare.at(-1) ?? 0).toFixed(2)} |`,
)
