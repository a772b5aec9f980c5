import {
  connectPacket,
  disconnectPacket,
  type Incoming,
  PacketReader,
  pingreqPacket,
  pubackPacket,
  publishPacket,
  subscribePacket,
} from './packets.js'

/** What the client needs of a WebSocket: the browser's, or the `ws` package's in Node tests. */
export interface SocketLike {
  binaryType: string
  onopen: ((ev: unknown) => void) | null
  onmessage: ((ev: { data: unknown }) => void) | null
  onclose: ((ev: unknown) => void) | null
  onerror: ((ev: unknown) => void) | null
  send(data: Uint8Array): void
  close(): void
}

export interface ClientOptions {
  readonly clientId: string
  readonly username?: string | undefined
  readonly password?: string | undefined
  /** Seconds between PINGREQs; a PINGRESP missing by the next one closes the connection. */
  readonly keepalive?: number
  /** Milliseconds before a lost connection is tried again; 0 = never (the service worker). */
  readonly reconnectPeriod: number
  /** Milliseconds a connection may take to reach CONNACK before it is dropped and retried. */
  readonly connectTimeout: number
  /** Only tests pass one: the default is the browser's WebSocket, subprotocol `mqtt`. */
  readonly socket?: (url: string) => SocketLike
}

/** A refused CONNACK carries its MQTT 3.1.1 return code (4, 5: a refused login). */
class ConnackError extends Error {
  constructor(readonly code: number) {
    super(`the broker refused the connection (CONNACK ${code})`)
  }
}

type Done = (err?: Error) => void

interface Events {
  connect: () => void
  message: (topic: string, payload: Uint8Array) => void
  error: (err: Error & { code?: number }) => void
  offline: () => void
}

const browserSocket = (url: string): SocketLike => new WebSocket(url, ['mqtt']) as SocketLike

/**
 * One MQTT 3.1.1 session over WebSocket with a clean session: QoS-1 subscribe and publish, QoS 0/1
 * in, keepalive, reconnect. Nothing is kept across connections, so an acknowledgement still
 * awaited when the connection drops is reported as failed.
 */
export class MqttClient {
  connected = false
  readonly #url: string
  readonly #opts: ClientOptions
  readonly #listeners: { [K in keyof Events]: Events[K][] } = {
    connect: [],
    message: [],
    error: [],
    offline: [],
  }
  readonly #waiting = new Map<number, { done: Done; suback: boolean }>()
  #socket: SocketLike | undefined
  #nextId = 1
  #ended = false
  #timers: ReturnType<typeof setTimeout>[] = []
  #ping: ReturnType<typeof setInterval> | undefined
  #pingAnswered = true

  constructor(url: string, opts: ClientOptions) {
    this.#url = url
    this.#opts = opts
    this.#open()
  }

  on<K extends keyof Events>(event: K, fn: Events[K]): void {
    this.#listeners[event].push(fn)
  }

  subscribe(filters: readonly string[], done: Done): void {
    this.#send(done, true, (id) => subscribePacket(id, filters, 1))
  }

  /** A QoS-1 publish; `done` runs on its PUBACK, or with an error if the connection drops first. */
  publish(topic: string, message: string | Uint8Array, done: Done = () => {}): void {
    const payload = typeof message === 'string' ? new TextEncoder().encode(message) : message
    this.#send(done, false, (id) => publishPacket(topic, payload, id))
  }

  /** Ends for good: a DISCONNECT if connected, no reconnect; acknowledgements awaited are dropped. */
  end(): void {
    this.#ended = true
    const s = this.#socket
    if (s && this.connected) s.send(disconnectPacket())
    this.#drop()
    this.#waiting.clear()
  }

  #emit<K extends keyof Events>(event: K, ...args: Parameters<Events[K]>): void {
    for (const fn of this.#listeners[event]) (fn as (...a: Parameters<Events[K]>) => void)(...args)
  }

  #send(done: Done, suback: boolean, make: (id: number) => Uint8Array): void {
    if (!this.connected || !this.#socket) {
      done(new Error('not connected to the broker'))
      return
    }
    // Packet ids 1–65535, skipping any still awaiting an acknowledgement.
    let id = this.#nextId
    while (this.#waiting.has(id)) id = (id % 0xffff) + 1
    this.#nextId = (id % 0xffff) + 1
    this.#waiting.set(id, { done, suback })
    this.#socket.send(make(id))
  }

  #open(): void {
    const reader = new PacketReader()
    const s = (this.#opts.socket ?? browserSocket)(this.#url)
    s.binaryType = 'arraybuffer'
    this.#socket = s
    this.#timers.push(setTimeout(() => s.close(), this.#opts.connectTimeout))
    s.onopen = () =>
      s.send(
        connectPacket({
          clientId: this.#opts.clientId,
          username: this.#opts.username,
          password: this.#opts.password,
          keepalive: this.#opts.keepalive ?? 0,
        }),
      )
    s.onmessage = (ev) => {
      if (this.#socket !== s) return
      const data = ev.data
      const bytes =
        data instanceof ArrayBuffer
          ? new Uint8Array(data)
          : ArrayBuffer.isView(data)
            ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
            : undefined
      if (!bytes) return
      let packets: Incoming[]
      try {
        packets = reader.push(bytes)
      } catch (err) {
        this.#emit('error', err as Error)
        s.close()
        return
      }
      for (const p of packets) this.#handle(s, p)
    }
    s.onerror = () => {
      if (this.#socket === s) this.#emit('error', new Error(`WebSocket error at ${this.#url}`))
    }
    s.onclose = () => {
      if (this.#socket !== s) return
      this.#drop()
      this.#lost()
    }
  }

  #handle(s: SocketLike, p: Incoming): void {
    switch (p.type) {
      case 'connack':
        if (p.code !== 0) {
          this.#emit('error', new ConnackError(p.code))
          s.close()
          return
        }
        for (const t of this.#timers) clearTimeout(t)
        this.#timers = []
        this.connected = true
        this.#startPing(s)
        this.#emit('connect')
        return
      case 'publish':
        if (p.qos === 1) s.send(pubackPacket(p.id))
        this.#emit('message', p.topic, p.payload)
        return
      case 'puback':
      case 'suback': {
        const w = this.#waiting.get(p.id)
        if (!w || w.suback !== (p.type === 'suback')) return
        this.#waiting.delete(p.id)
        const refused = p.type === 'suback' && p.codes.some((c) => c === 0x80)
        w.done(refused ? new Error('the broker refused a subscription (SUBACK 0x80)') : undefined)
        return
      }
      case 'pingresp':
        this.#pingAnswered = true
    }
  }

  #startPing(s: SocketLike): void {
    const every = (this.#opts.keepalive ?? 0) * 1000
    if (every <= 0) return
    this.#pingAnswered = true
    this.#ping = setInterval(() => {
      // No PINGRESP since the last PINGREQ: the link is dead though the socket may not know yet.
      if (!this.#pingAnswered) {
        s.close()
        this.#drop()
        this.#lost()
        return
      }
      this.#pingAnswered = false
      s.send(pingreqPacket())
    }, every)
  }

  /** Forgets the current socket and its timers; the socket is closed if still open. */
  #drop(): void {
    const s = this.#socket
    this.#socket = undefined
    this.connected = false
    for (const t of this.#timers) clearTimeout(t)
    this.#timers = []
    if (this.#ping) clearInterval(this.#ping)
    this.#ping = undefined
    if (s) {
      s.onclose = null
      s.onmessage = null
      s.close()
    }
  }

  #lost(): void {
    const waiting = [...this.#waiting.values()]
    this.#waiting.clear()
    for (const w of waiting) w.done(new Error('the connection to the broker dropped'))
    if (this.#ended) return
    this.#emit('offline')
    if (this.#opts.reconnectPeriod > 0)
      this.#timers.push(setTimeout(() => this.#open(), this.#opts.reconnectPeriod))
  }
}
