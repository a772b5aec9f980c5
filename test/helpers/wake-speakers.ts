import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../src/adapters/mqtt/connection.js'
import {
  MqttWakeArbiter,
  type MqttWakeArbiterOptions,
} from '../../src/adapters/mqtt/wake-arbiter.js'
import { DeviceState } from '../../src/device/device-state.js'
import type { WakeDetection } from '../../src/ports/wake-word.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { PREFIX, USERS } from './brokers.js'

/** One speaker's arbitration side on the broker at `url`: its own connection, arbiter and log. */
export interface WakeSpeaker {
  readonly arbiter: MqttWakeArbiter
  /** Counts the claims the arbiter ignored, as the composition wires it. */
  readonly state: DeviceState
  readonly connection: MqttConnection
  readonly log: MemoryLogger
  close(): Promise<void>
}

/**
 * Speaker `deviceId` as the appliance connects it (the documented device user unless `user` says
 * otherwise); resolves once it hears the wake topic, unless `connected` is false (no broker there).
 */
export async function wakeSpeaker(
  url: string,
  deviceId: string,
  over: Partial<Omit<MqttWakeArbiterOptions, 'connection' | 'deviceId'>> & {
    user?: { username: string; password: string }
    connected?: boolean
  } = {},
): Promise<WakeSpeaker> {
  const { user, connected, ...options } = over
  const log = new MemoryLogger()
  const clock = realClock()
  const connection = new MqttConnection({
    url,
    clientId: `nocturn-${deviceId}`,
    ...(user ?? USERS.device),
    logger: log,
    clock,
  })
  const state = new DeviceState()
  const arbiter = new MqttWakeArbiter({
    connection,
    deviceId,
    prefix: PREFIX,
    logger: log,
    clock,
    onRefused: (reason) => state.refused('wake_claims', reason),
    ...options,
  })
  connection.start()
  if (connected !== false) {
    await connection.ready()
    await connection.subscriptionsSettled()
  }
  let closed: Promise<void> | undefined
  return {
    arbiter,
    state,
    connection,
    log,
    close() {
      closed ??= arbiter.close().then(() => connection.close({ force: true }))
      return closed
    },
  }
}

/** A detection of "hey jarvis" heard at `levelDb`. */
export function heard(levelDb: number, score = 0.9): WakeDetection {
  return { phrase: 'hey jarvis', score, levelDb, heardAtMs: Date.now() }
}
