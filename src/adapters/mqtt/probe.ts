import mqtt, { type MqttClient } from 'mqtt'
import { type Clock, monotonicNow } from '../../ports/clock.js'
import type { Topics } from '../../protocol/index.js'
import {
  type BrokerCredentials,
  clientOptions,
  reasonName,
  speaksOnly311,
} from './client-options.js'

export interface BrokerProbeOptions extends BrokerCredentials {
  readonly url: string
  /** Times the probe and its deadlines; mqtt.js's connect timeout is its own timer. */
  readonly clock: Clock
  readonly timeoutMs?: number
  /** Write rights to try once connected (see `writeProbes`); none by default. */
  readonly rights?: readonly RightProbe[]
}

/** One write right to try: a publish that reaches nobody who acts on it. */
export interface RightProbe {
  /** What the right is for, e.g. "approval requests" or "home action unlock_front_door". */
  readonly label: string
  /** The topic the device really writes (for the message). */
  readonly needed: string
  /** The topic probed: inside the same ACL rule, but not consumed by anyone. */
  readonly topic: string
  readonly retain: boolean
}

export type RightResult = RightProbe & {
  /** ok: the broker acknowledged it; refused: a reason code ≥ 0x80; unknown: MQTT 3.1.1 only. */
  readonly result: 'ok' | 'refused' | 'unknown'
  readonly reason?: string
}

export type BrokerProbe =
  | {
      readonly ok: true
      readonly ms: number
      readonly protocolVersion: 4 | 5
      readonly rights: readonly RightResult[]
    }
  | {
      readonly ok: false
      readonly ms: number
      /**
       * auth: the broker answered and refused these credentials; unreachable: nothing answers;
       * tls: the TLS handshake failed; timeout: no answer in time; refused: another CONNACK code.
       */
      readonly reason: 'auth' | 'unreachable' | 'tls' | 'timeout' | 'refused'
      /** What the broker or the socket said; never holds the password. */
      readonly message: string
    }

/** The last level of every probe topic: no Nocturn client and no home device subscribes to it. */
export const PROBE_LEVEL = 'nocturn-doctor-probe'

/**
 * The write rights a device needs, each probed without side effects (docs/protocol.md, "What
 * doctor checks"): an empty retained publish on a request topic under an id nobody uses (a clear
 * of nothing; phones and the device ignore it), an empty outcome for that id (no phone can verify
 * it), and for the status, the conversation replies and every home action an empty publish one
 * level *below* the real topic, which the documented `…/#` rule covers and nobody listens to — a
 * lock subscribed to its own topic never sees it.
 */
export function writeProbes(topics: Topics, homeTopics: readonly string[]): RightProbe[] {
  return [
    {
      label: 'approval requests',
      needed: topics.requests,
      topic: topics.request(PROBE_LEVEL),
      retain: true,
    },
    {
      label: 'approval outcomes',
      needed: topics.outcomes,
      topic: topics.outcome(PROBE_LEVEL),
      retain: false,
    },
    {
      label: 'status',
      needed: topics.status,
      topic: `${topics.status}/${PROBE_LEVEL}`,
      retain: false,
    },
    {
      label: 'conversation replies',
      needed: topics.conversationReply('+'),
      topic: topics.conversationReply(PROBE_LEVEL),
      retain: false,
    },
    ...[...new Set(homeTopics)].map((t) => ({
      label: `home action topic ${t}`,
      needed: t,
      topic: `${t}/${PROBE_LEVEL}`,
      retain: false,
    })),
  ]
}

/**
 * One connection attempt (MQTT 5, again in 3.1.1 if the broker refuses 5), no retries, the write
 * probes, then a clean goodbye. For `nocturn doctor`; the appliance itself uses MqttConnection.
 */
export async function probeBroker(options: BrokerProbeOptions): Promise<BrokerProbe> {
  const started = monotonicNow(options.clock)
  const first = await connectOnce(options, 5, started)
  const attempt =
    !first.ok && first.reason === 'refused' && first.only311
      ? await connectOnce(options, 4, started)
      : first
  if (!attempt.ok) {
    const { only311: _o, ...failure } = attempt
    return failure
  }
  const { client, version } = attempt
  const rights: RightResult[] = []
  for (const r of options.rights ?? []) rights.push(await tryRight(client, r, version))
  await new Promise<void>((resolve) => client.end(false, {}, () => resolve()))
  const ms = Math.round(monotonicNow(options.clock) - started)
  return { ok: true, ms, protocolVersion: version, rights }
}

function tryRight(client: MqttClient, r: RightProbe, version: 4 | 5): Promise<RightResult> {
  return new Promise((resolve) => {
    client.publish(r.topic, '', { qos: 1, retain: r.retain }, (err) => {
      const code = (err as { code?: unknown } | undefined)?.code
      if (!err) resolve({ ...r, result: version === 5 ? 'ok' : 'unknown' })
      else if (typeof code === 'number' && code >= 0x80) {
        resolve({ ...r, result: 'refused', reason: reasonName(code) })
      } else resolve({ ...r, result: 'unknown', reason: err.message })
    })
  })
}

type Attempt =
  | { ok: true; client: MqttClient; version: 4 | 5 }
  | {
      ok: false
      ms: number
      reason: 'auth' | 'unreachable' | 'tls' | 'timeout' | 'refused'
      message: string
      only311: boolean
    }

function connectOnce(
  options: BrokerProbeOptions,
  version: 4 | 5,
  started: number,
): Promise<Attempt> {
  const timeoutMs = options.timeoutMs ?? 4000
  const clock = options.clock
  const opts = clientOptions(options, timeoutMs, version)
  return new Promise((resolve) => {
    let done = false
    const client = mqtt.connect(options.url, opts)
    const fail = (
      reason: 'auth' | 'unreachable' | 'tls' | 'timeout' | 'refused',
      message: string,
      only311 = false,
    ) => {
      if (done) return
      done = true
      clock.clearTimeout(timer)
      const r: Attempt = {
        ok: false,
        ms: Math.round(monotonicNow(clock) - started),
        reason,
        message: scrub(message, options.password),
        only311,
      }
      client.end(true, {}, () => resolve(r))
    }
    const timer = clock.setTimeout(
      () => fail('timeout', `no answer within ${timeoutMs} ms`),
      timeoutMs + 500,
    )
    client.on('connect', () => {
      if (done) return
      done = true
      clock.clearTimeout(timer)
      resolve({ ok: true, client, version })
    })
    client.on('error', (err: Error & { code?: string | number }) => {
      const code = err.code
      if (version === 5 && speaksOnly311(err)) return fail('refused', err.message, true)
      if (code === 4 || code === 5 || code === 134 || code === 135) return fail('auth', err.message)
      if (typeof code === 'number') return fail('refused', err.message)
      if (
        code === 'ECONNREFUSED' ||
        code === 'EHOSTUNREACH' ||
        code === 'ENOTFOUND' ||
        code === 'EAI_AGAIN' ||
        code === 'ENETUNREACH'
      ) {
        return fail('unreachable', err.message)
      }
      if (
        /certificate|self.signed|ssl|tls|handshake/i.test(err.message) ||
        /^(ERR_SSL|ERR_TLS|CERT_|DEPTH_ZERO|UNABLE_TO)/.test(String(code ?? ''))
      ) {
        return fail('tls', err.message)
      }
      fail('unreachable', err.message)
    })
    client.on('close', () => {
      // A refusal's error event may follow the close: give it a moment to say why.
      clock.setTimeout(
        () => fail('unreachable', 'the connection closed before the broker answered'),
        100,
      )
    })
  })
}

function scrub(message: string, password: string | undefined): string {
  return password ? message.split(password).join('***') : message
}
