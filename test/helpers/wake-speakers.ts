import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../src/adapters/mqtt/connection.js'
import { MqttStatus, offlineStatus } from '../../src/adapters/mqtt/status.js'
import {
  MqttWakeArbiter,
  type MqttWakeArbiterOptions,
} from '../../src/adapters/mqtt/wake-arbiter.js'
import { DeviceState } from '../../src/device/device-state.js'
import type { WakeDetection } from '../../src/ports/wake-word.js'
import { topicsFor } from '../../src/protocol/index.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { PREFIX, USERS } from './brokers.js'

/** One speaker's arbitration side on the broker at `url`: its own connection, arbiter and log. */
export interface WakeSpeaker {
  readonly arbiter: MqttWakeArbiter
  /** Counts the claims the arbiter ignored, as the composition wires it. */
  readonly state: DeviceState
  readonly connection: MqttConnection
  /** Its retained status, as the appliance publishes it (listening for the wake word). */
  readonly status: MqttStatus
  readonly log: MemoryLogger
  close(): Promise<void>
}

/**
 * Speaker `deviceId` as the appliance connects it (the documented device user unless `user` says
 * otherwise), with its retained status and last will; resolves once it hears the wake topic and
 * its status is out, unless `connected` is false (no broker there).
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
  const statusTopic = topicsFor(PREFIX, deviceId).status
  const connection = new MqttConnection({
    url,
    clientId: `nocturn-${deviceId}`,
    ...(user ?? USERS.device),
    will: {
      topic: statusTopic,
      payload: JSON.stringify(offlineStatus(null)),
      retain: true,
      qos: 1,
    },
    logger: log,
    clock,
  })
  const status = new MqttStatus({ connection, topic: statusTopic, model: null, logger: log, clock })
  status.setSensitivity('normal')
  // Its own status handed back by the broker: the other speakers on it have it by then too.
  const statusOut = new Promise<void>((resolve) =>
    connection.onMessage((topic, payload) => {
      if (topic === statusTopic && payload.toString().includes('"online":true')) resolve()
    }),
  )
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
    // Another user may not be let write its status (the locked device).
    if (!user) await statusOut
  }
  let closed: Promise<void> | undefined
  return {
    arbiter,
    state,
    connection,
    status,
    log,
    close() {
      // Offline said before the connection ends, as a clean stop does: the next test's speakers
      // must not count this one as online.
      closed ??= arbiter
        .close()
        .then(() => status.goOffline().catch(() => {}))
        .then(() => connection.close({ force: true }))
      return closed
    },
  }
}

/** A detection of "hey jarvis" heard at `levelDb`. */
export function heard(levelDb: number, score = 0.9): WakeDetection {
  return { phrase: 'hey jarvis', score, levelDb, heardAtMs: Date.now() }
}
