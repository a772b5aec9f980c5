// The offline world for the appliance soak, run in the benchmark's own process so that none of it
// counts against the appliance's memory: the embedded broker, a paired phone that approves, the
// front door's lock, and the fake Live service playing a household that keeps talking.
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { EmbeddedBroker } from '../../src/adapters/aedes/broker.js'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../src/adapters/mqtt/connection.js'
import { PhoneKeyStore } from '../../src/app/phone-keys.js'
import { silentLogger } from '../../src/core/logger.js'
import { PhoneClient } from '../../src/phone/client.js'
import { DEFAULT_PREFIX } from '../../src/protocol/index.js'
import {
  type FakeConnection,
  FakeLiveServer,
  phrase,
  type ReceivedFrame,
} from '../../src/testing/fake-live-server/index.js'
import { testPhoneLink } from '../../test/helpers/device-mqtt.js'

export const DEVICE = 'kitchen'
export const MODEL = 'gemini-2.5-flash-native-audio-preview-12-2025'

/** One cycle of the household, repeated for as long as the session lasts. */
export const CYCLE_MS = 20_000

interface WorldCounts {
  connections: number
  cycles: number
  /** Gated calls whose final answer reached the fake service. */
  approvedCalls: number
  unlocks: number
  phonePending: number
  timeCalls: number
  audioFramesIn: number
  /** Waits for an answer that ran out (should stay 0). */
  missed: number
}

export interface World {
  readonly brokerUrl: string
  readonly baseUrl: string
  readonly phonesDir: string
  readonly counts: WorldCounts
  readonly errors: readonly string[]
  close(): Promise<void>
}

type FunctionResponse = { id?: string; willContinue?: boolean }

export async function startWorld(work: string): Promise<World> {
  const logger = silentLogger
  const counts: WorldCounts = {
    connections: 0,
    cycles: 0,
    approvedCalls: 0,
    unlocks: 0,
    phonePending: 0,
    timeCalls: 0,
    audioFramesIn: 0,
    missed: 0,
  }
  const stack: (() => Promise<void> | void)[] = []
  const broker = new EmbeddedBroker({ port: 0, prefix: DEFAULT_PREFIX, logger })
  await broker.start()
  stack.push(() => broker.stop())

  const phonesDir = join(work, 'phones')
  const anna = new PhoneKeyStore(phonesDir).add('anna', "Anna's phone")

  // Connections play no script: the driver below pushes frames at them.
  const server = await FakeLiveServer.start({ logger, scripts: () => ({ steps: [] }) })
  stack.push(() => server.close())

  const lock = new MqttConnection({
    url: broker.url,
    clientId: 'front-door-lock',
    logger,
    clock: realClock(),
  })
  lock.onMessage(() => {
    counts.unlocks++
  })
  lock.start()
  await lock.ready()
  await lock.subscribe(['home/front-door/set'])
  stack.push(() => lock.close())

  const phone = new PhoneClient({
    link: testPhoneLink,
    pairing: {
      broker: broker.url,
      device: DEVICE,
      prefix: DEFAULT_PREFIX,
      phone: 'anna',
      key: anna.key,
    },
    logger,
  })
  phone.on((e) => {
    if (e.kind === 'pending') {
      counts.phonePending++
      // Anna reads it for a moment, then approves this once.
      setTimeout(() => void phone.decide(e.request.id, 'approve', 'once'), 1500)
    }
  })
  await phone.start()
  stack.push(() => phone.close())

  // The fake service records every client frame; the soak sends 50 a second for minutes. Keep
  // only the tool responses (what the driver waits for) and drop the rest as they arrive.
  const responses: { conn: number; r: FunctionResponse }[] = []
  const drain = () => {
    for (const f of server.received.splice(0) as ReceivedFrame[]) {
      if (f.key === 'toolResponse') {
        const list = (f.frame.toolResponse as { functionResponses?: FunctionResponse[] })
          ?.functionResponses
        for (const r of list ?? []) responses.push({ conn: f.conn, r })
      } else if (f.key === 'realtimeInput') counts.audioFramesIn++
    }
  }
  const drainTimer = setInterval(drain, 250)
  stack.push(() => clearInterval(drainTimer))

  const answer = async (
    conn: FakeConnection,
    id: string,
    final: boolean,
    timeoutMs: number,
  ): Promise<boolean> => {
    try {
      await server.until(() => {
        drain()
        const i = responses.findIndex(
          (x) => x.conn === conn.index && x.r.id === id && (x.r.willContinue !== true) === final,
        )
        if (i < 0) return !conn.open
        responses.splice(i, 1)
        return true
      }, timeoutMs)
      return conn.open
    } catch {
      counts.missed++
      return false
    }
  }

  let closing = false
  const speak = async (conn: FakeConnection, name: string) => {
    const p = phrase(name)
    await conn.play([
      { speak: p.pcm, transcript: p.text },
      { send: { serverContent: { turnComplete: true } } },
    ])
  }
  /** The household: every CYCLE_MS, a gated unlock the phone approves, then a question. */
  const drive = async (conn: FakeConnection) => {
    for (let n = 1; !closing && conn.open; n++) {
      const start = Date.now()
      conn.user('Please unlock the front door for the plumber.')
      const call = `unlock-${conn.index}-${n}`
      conn.toolCall({ id: call, name: 'unlock_front_door', args: {} })
      if (!(await answer(conn, call, false, 10_000)) && !conn.open) return
      await speak(conn, 'waiting')
      if (await answer(conn, call, true, 30_000)) counts.approvedCalls++
      await speak(conn, 'unlocked')
      await sleep(Math.max(0, start + CYCLE_MS / 2 - Date.now()))
      if (closing || !conn.open) return
      conn.user('What time is it, and is the door still open?')
      const t = `time-${conn.index}-${n}`
      conn.toolCall({ id: t, name: 'current_time', args: {} })
      if (await answer(conn, t, true, 10_000)) counts.timeCalls++
      await speak(conn, 'time')
      await speak(conn, 'checking')
      counts.cycles++
      await sleep(Math.max(0, start + CYCLE_MS - Date.now()))
    }
  }
  const driving = new Set<number>()
  const watcher = setInterval(() => {
    for (const c of server.connections) {
      if (c.setup && !driving.has(c.index)) {
        driving.add(c.index)
        counts.connections++
        void drive(c).catch((err: unknown) => server.errors.push(`driver: ${String(err)}`))
      }
    }
  }, 100)
  stack.push(() => {
    closing = true
    clearInterval(watcher)
  })

  return {
    brokerUrl: broker.url,
    baseUrl: server.baseUrl,
    phonesDir,
    counts,
    errors: server.errors,
    async close() {
      for (const fn of stack.reverse()) await Promise.resolve(fn()).catch(() => {})
    },
  }
}
