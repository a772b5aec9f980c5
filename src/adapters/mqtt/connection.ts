import type { IClientOptions, MqttClient } from 'mqtt'
import { Backoff } from '../../core/backoff.js'
import { errorText, NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import {
  type BrokerCredentials,
  clientOptions,
  reasonName,
  speaksOnly311,
} from './client-options.js'

/**
 * The broker answered a publish with a refusal (MQTT 5 reason code ≥ 0x80, e.g. 0x87 not
 * authorized by its ACL). Only QoS ≥ 1 publishes over MQTT 5 can be refused visibly.
 */
export class PublishRefused extends NocturnError {
  readonly reasonCode: number
  readonly topic: string
  constructor(topic: string, reasonCode: number) {
    super('NOC_ERR_BROKER_REFUSED', `the broker refused it (${reasonName(reasonCode)})`)
    this.reasonCode = reasonCode
    this.topic = topic
  }
}

export interface MqttConnectionOptions extends BrokerCredentials {
  /** mqtt://host:port or mqtts://host:port. */
  readonly url: string
  /** The last will, published by the broker if this client vanishes. */
  readonly will?: { topic: string; payload: string; retain: boolean; qos: 0 | 1 }
  readonly logger: Logger
  /** The timers this class sets itself (mqtt.js keeps its own: see `start`). */
  readonly clock: Clock
  /**
   * Reconnect backoff: first delay, doubled per failure up to the maximum (default 5 s, so a
   * broker's return is noticed within ~6 s, jitter included: well inside an approval window).
   */
  readonly backoffMinMs?: number
  readonly backoffMaxMs?: number
  readonly connectTimeoutMs?: number
}

export interface PublishOptions {
  readonly retain?: boolean
  readonly qos?: 0 | 1 | 2
}

type MessageHandler = (topic: string, payload: Buffer, retained: boolean) => void

/**
 * One MQTT client with our own reconnect backoff (mqtt.js retries at a fixed period). Publishing
 * while disconnected fails at once instead of queueing: the approver must know the phone cannot
 * hear it now, and re-publishes what still matters itself when the link is back.
 */
export class MqttConnection {
  readonly #options: MqttConnectionOptions
  readonly #log: Logger
  #client: MqttClient | undefined
  #started = false
  #closed = false
  readonly #backoff: Backoff
  #timer: NodeJS.Timeout | undefined
  #version: 4 | 5 = 5
  #downgraded = false
  readonly #onMessage: MessageHandler[] = []
  readonly #onConnect: Array<() => void> = []
  readonly #onDisconnect: Array<() => void> = []
  #firstConnect: Promise<void>
  #resolveFirst!: () => void
  /** The subscriptions asked for since the latest connection (the onConnect handlers' own). */
  #subscribing: Promise<void>[] = []
  /** The first attempt has ended, connected or not (a 3.1.1 retry after a refused 5 is still it). */
  #firstSettled = false
  readonly #firstAttempt: Promise<void>
  #settleFirst!: () => void

  constructor(options: MqttConnectionOptions) {
    this.#options = options
    this.#log = options.logger.child({ component: 'mqtt', clientId: options.clientId })
    // Jitter, so a household's devices do not all reconnect in the same instant after an outage.
    this.#backoff = new Backoff({
      initialMs: options.backoffMinMs ?? 250,
      maxMs: options.backoffMaxMs ?? DEFAULT_BACKOFF_MAX_MS,
      jitter: 0.25,
    })
    this.#firstConnect = new Promise((resolve) => {
      this.#resolveFirst = resolve
    })
    this.#firstAttempt = new Promise((resolve) => {
      this.#settleFirst = () => {
        this.#firstSettled = true
        resolve()
      }
    })
  }

  /**
   * True until the first connection attempt has ended, including before `start()` (the appliance
   * connects only once it listens): a caller may wait for it (`firstAttempt()`) rather than treat
   * a broker that is being reached for the first time like one that is gone.
   */
  get firstAttemptPending(): boolean {
    return !this.#firstSettled && !this.#closed
  }

  /** Resolves when the first connection attempt has ended, connected or not, or on close. */
  firstAttempt(): Promise<void> {
    return this.#firstAttempt
  }

  get connected(): boolean {
    return this.#client?.connected === true
  }

  /** 5 unless the broker refused MQTT 5; with 4 a publish the ACL forbids is dropped unseen. */
  get protocolVersion(): 4 | 5 {
    return this.#version
  }

  /**
   * Starts connecting; the device runs (failing approvals closed) while the broker is away.
   * mqtt.js is loaded here, not when the appliance starts: with `ws`, `socks` and
   * `readable-stream` it is about a fifth of a bundled start, and the appliance connects only
   * once it listens (docs/architecture.md, "Composition").
   */
  start(): void {
    if (this.#started) return
    this.#started = true
    import('mqtt').then(
      ({ default: mqtt }) => {
        if (!this.#closed) this.#connect(mqtt.connect)
      },
      (err: unknown) => {
        // A broken install: say so once; approvals see a broker that never answers.
        this.#log.error({ event: 'mqtt_unavailable', err: errorText(err) }, 'mqtt.js did not load')
        this.#settleFirst()
      },
    )
  }

  #connect(connect: typeof import('mqtt').connect): void {
    const options = this.#options
    // We schedule reconnects ourselves, with backoff (clientOptions turns mqtt.js's off). The
    // keepalive ping and the connect timeout are mqtt.js's own timers, inside the library: they
    // run on Node's clock, not on the injected one.
    const opts: IClientOptions = {
      ...clientOptions(options, options.connectTimeoutMs ?? 5000, this.#version),
      keepalive: 30,
      resubscribe: false,
    }
    if (options.will) opts.will = { ...options.will }
    const client = connect(options.url, opts)
    this.#client = client
    yieldBetweenSlices(client)
    client.on('connect', () => {
      this.#backoff.reset()
      // Nagle's algorithm against the peer's delayed ACK costs ~40 ms per small message; approvals
      // are a handful of small messages, each waited for.
      const stream = client.stream as { setNoDelay?: (on: boolean) => void }
      stream.setNoDelay?.(true)
      this.#log.info({ url: redactUrl(options.url) }, 'mqtt connected')
      this.#resolveFirst()
      this.#settleFirst()
      this.#subscribing = []
      for (const h of this.#onConnect) h()
    })
    client.on('close', () => {
      if (this.#closed) return
      // A broker that refused MQTT 5 is asked again at once, in 3.1.1.
      const downgrading = this.#downgraded
      const delay = downgrading ? 0 : this.#backoff.next()
      this.#downgraded = false
      // That close ends the refused MQTT 5 attempt, not a connection: nothing was lost.
      if (!downgrading) {
        this.#settleFirst()
        this.#log.warn({ event: 'mqtt_connection_lost', retryInMs: delay }, 'mqtt connection lost')
      }
      for (const h of this.#onDisconnect) h()
      // On Node's clock, with mqtt.js's keepalive and connect timeout: the transport's timers
      // belong together (a test's virtual clock would otherwise hold a 3.1.1 retry back forever).
      clearTimeout(this.#timer)
      this.#timer = setTimeout(() => {
        if (!this.#closed) client.reconnect()
      }, delay)
      this.#timer.unref()
    })
    client.on('error', (err) => {
      if (this.#version === 5 && speaksOnly311(err)) {
        this.#version = 4
        this.#downgraded = true
        client.options.protocolVersion = 4
        // Said once per start, as information: the client works, and doctor is what warns a
        // household whose ACL then drops forbidden publishes unseen (device-checks.ts).
        this.#log.info(
          { event: 'mqtt5_refused' },
          'broker refuses MQTT 5: using 3.1.1, where a publish its ACL forbids is dropped unseen',
        )
        return
      }
      // Errors are followed by 'close'; say what it was, never with credentials.
      this.#log.warn({ event: 'mqtt_error', err: errorText(err) }, 'mqtt error')
    })
    client.on('message', (topic, payload, packet) => {
      for (const h of this.#onMessage) {
        try {
          h(topic, payload, packet.retain === true)
        } catch (err) {
          // A handler bug must not take the connection (and every other handler) down with it.
          this.#log.error(
            { event: 'mqtt_message_handler_failed', err: errorText(err), topic },
            'mqtt message handler failed',
          )
        }
      }
    })
  }

  /** Resolves on the first successful connection (tests and the phone client wait for it). */
  ready(): Promise<void> {
    return this.#firstConnect
  }

  onMessage(handler: MessageHandler): void {
    this.#onMessage.push(handler)
  }

  /** Called on every (re)connection; subscriptions and re-publishing belong here. */
  onConnect(handler: () => void): void {
    this.#onConnect.push(handler)
    if (this.connected) handler()
  }

  onDisconnect(handler: () => void): void {
    this.#onDisconnect.push(handler)
  }

  subscribe(filters: string[]): Promise<void> {
    const client = this.#client
    if (!client?.connected) return Promise.reject(notConnected())
    const subscribed = new Promise<void>((resolve, reject) => {
      client.subscribe(filters, { qos: 1 }, (err, granted) => {
        if (err) return reject(err)
        // 128 and up (0x80, MQTT 5: 0x87…) is the broker's refusal, e.g. by ACL.
        const refused = (granted ?? []).filter((g) => g.qos >= 128).map((g) => g.topic)
        if (refused.length > 0)
          return reject(new Error(`subscription refused: ${refused.join(', ')}`))
        resolve()
      })
    })
    this.#subscribing.push(subscribed)
    return subscribed
  }

  /**
   * Resolves once every subscription asked for since the latest connection has been answered
   * (granted or refused). Asked for after the onConnect handlers have run (they subscribe there),
   * it says when this device hears what it listens to: only then is it "online" (status.ts).
   */
  subscriptionsSettled(): Promise<void> {
    return Promise.allSettled(this.#subscribing).then(() => {})
  }

  /**
   * Publishes one message; resolves when the broker has it (QoS 1) or it is written (QoS 0).
   * Rejects at once when disconnected. This is also the `Publisher` capability other tools use.
   */
  publish(
    topic: string,
    payload: string | Uint8Array,
    options: PublishOptions = {},
  ): Promise<void> {
    const client = this.#client
    const body =
      typeof payload === 'string' || Buffer.isBuffer(payload)
        ? payload
        : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)
    // Once closing, nothing more is written: what was in flight still goes, but a publish that
    // comes after (an approval withdrawn at shutdown, the state it changes) would be written to
    // a stream that has ended.
    if (!client?.connected || this.#closed) return Promise.reject(notConnected())
    return new Promise((resolve, reject) => {
      client.publish(
        topic,
        body,
        { qos: options.qos ?? 1, retain: options.retain ?? false },
        (err) => {
          if (!err) return resolve()
          const code = (err as { code?: unknown }).code
          reject(typeof code === 'number' && code >= 0x80 ? new PublishRefused(topic, code) : err)
        },
      )
    })
  }

  /**
   * Disconnects cleanly (the broker then keeps the last will to itself). `force` drops the socket
   * without a goodbye, as a crash would: the broker publishes the will.
   */
  async close(opts: { force?: boolean } = {}): Promise<void> {
    this.#closed = true
    this.#settleFirst()
    clearTimeout(this.#timer)
    const client = this.#client
    if (!client) return
    // Not connected (still connecting, or between retries) there is nothing in flight to wait
    // for, and mqtt.js's graceful end would leave a connecting socket to finish its handshake.
    const force = opts.force === true || !client.connected
    await new Promise<void>((resolve) => {
      // A graceful end waits for in-flight QoS 1 messages; a broker that went away mid-flight
      // would hold shutdown forever, so after a grace period the socket is dropped instead.
      const clock = this.#options.clock
      const t = force
        ? undefined
        : clock.setTimeout(() => client.end(true, {}, () => resolve()), 2000)
      client.end(force, {}, () => {
        if (t) clock.clearTimeout(t)
        resolve()
      })
    })
  }
}

/**
 * The reconnect back-off's cap. An approval waits 60 s by default; a cap of 5 s (≤ 6.25 s with
 * jitter) means a returning broker is noticed with most of that window left, and costs a LAN
 * broker one connection attempt every few seconds while it is away.
 */
const DEFAULT_BACKOFF_MAX_MS = 5000

function notConnected(): Error {
  return new NocturnError('NOC_ERR_BROKER_UNREACHABLE', 'not connected to the MQTT broker')
}

/** How long incoming messages may hold the event loop before the client yields to it. */
const SLICE_MS = 8

/**
 * A flood must not stall the loop: libuv reads a socket up to 32 times per turn, and mqtt.js
 * handles every packet of those reads in one nextTick chain, so 20 000 junk messages could hold
 * the loop for seconds (and the watchdog would kill the device). mqtt.js waits for
 * `handleMessage`'s callback before the next packet; after SLICE_MS of work in one turn the
 * callback is deferred to the next turn, so timers and I/O run in between, and the unread bytes
 * stay in the socket (TCP back-pressure towards the broker) instead of in memory.
 */
function yieldBetweenSlices(client: MqttClient): void {
  let sliceStart = 0
  let inSlice = false
  client.handleMessage = (_packet, done) => {
    // A message still being read when the client ends is left unacknowledged: its PUBACK would be
    // written to a stream that has ended (an error line at every shutdown). Unacknowledged, the
    // broker keeps it for a persistent session; this client is going away either way.
    const callback = () => {
      if (!client.disconnecting && !client.disconnected) done()
    }
    // Real elapsed time on purpose, not the injected Clock: what is bounded is how long this
    // process really holds its event loop.
    const now = performance.now()
    if (!inSlice) {
      inSlice = true
      sliceStart = now
      setImmediate(() => {
        inSlice = false
      })
    }
    if (now - sliceStart < SLICE_MS) callback()
    else setImmediate(() => callback())
  }
}

/** The URL without any user:password part, for logs. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    u.username = ''
    u.password = ''
    return u.toString()
  } catch {
    return '(unparseable url)'
  }
}
