import { timingSafeEqual } from 'node:crypto'
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http'
import { createServer, type Server, type Socket } from 'node:net'
import { Aedes, type Client } from 'aedes'
import { createWebSocketStream, WebSocketServer } from 'ws'
import type { Logger } from '../../core/logger.js'

/**
 * Who may do what: the device owns its prefix; phones write decisions and their own conversation
 * requests, and read everything but another phone's conversation replies (a phone's broker user
 * is named as its phone id, as in docs/broker.md's ACL).
 */
export type BrokerRole = 'device' | 'phone'

interface BrokerUser {
  readonly username: string
  readonly password: string
  readonly role: BrokerRole
}

export interface EmbeddedBrokerOptions {
  /** 0 picks a free port. The broker listens on 127.0.0.1 only, always. */
  readonly port?: number
  /** Topic prefix the ACL applies to, e.g. "nocturn/v1". */
  readonly prefix: string
  /**
   * Also serve MQTT over WebSocket (what a browser speaks), on this port of 127.0.0.1; 0 picks a
   * free one. Unset: TCP only. Same users, same ACL.
   */
  readonly wsPort?: number
  /** Without users the broker is open to anyone on loopback (the offline run); with them, the ACL applies. */
  readonly users?: readonly BrokerUser[]
  readonly logger: Logger
}

/**
 * An MQTT broker inside the process (aedes), for the offline run and development. Loopback only,
 * and with users it enforces the same rules as docs/broker.md's Mosquitto ACL, so tests against
 * it mean the same as tests against Mosquitto. Real households use their own broker.
 */
export class EmbeddedBroker {
  readonly #options: EmbeddedBrokerOptions
  readonly #log: Logger
  readonly #roles = new WeakMap<Client, BrokerRole>()
  readonly #names = new WeakMap<Client, string>()
  readonly #sockets = new Set<Socket>()
  #aedes: Aedes | undefined
  #server: Server | undefined
  #ws: { http: HttpServer; wss: WebSocketServer } | undefined
  #port = 0
  #wsPort = 0

  constructor(options: EmbeddedBrokerOptions) {
    this.#options = options
    this.#log = options.logger.child({ component: 'embedded-broker' })
  }

  get port(): number {
    return this.#port
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.#port}`
  }

  /** The WebSocket port, 0 when WebSocket is not served. */
  get wsPort(): number {
    return this.#wsPort
  }

  /** e.g. `ws://127.0.0.1:9001`; undefined when WebSocket is not served. */
  get wsUrl(): string | undefined {
    return this.#ws ? `ws://127.0.0.1:${this.#wsPort}` : undefined
  }

  async start(): Promise<void> {
    const users = this.#options.users
    const prefix = this.#options.prefix
    const aedes = await Aedes.createBroker({
      authenticate: (client, username, password, done) => {
        if (!users) return done(null, true)
        const u = users.find((x) => x.username === username)
        const ok = u !== undefined && password !== undefined && sameSecret(u.password, password)
        if (!ok || !u) {
          this.#log.warn(
            { event: 'broker_refused_login', clientId: client.id },
            'broker refused a login',
          )
          const err = Object.assign(new Error('bad username or password'), { returnCode: 4 })
          return done(err as Parameters<typeof done>[0], false)
        }
        this.#roles.set(client, u.role)
        this.#names.set(client, u.username)
        done(null, true)
      },
      authorizePublish: (client, packet, cb) => {
        if (!users || !client) return cb(null)
        const role = this.#roles.get(client)
        if (mayPublish(role, prefix, packet.topic, this.#names.get(client))) return cb(null)
        this.#log.warn(
          { event: 'broker_refused_publish', clientId: client.id, topic: packet.topic },
          'broker refused a publish',
        )
        cb(new Error('not authorized'))
      },
      authorizeSubscribe: (client, sub, cb) => {
        if (!users) return cb(null, sub)
        const role = this.#roles.get(client)
        if (maySubscribe(role, prefix, sub.topic, this.#names.get(client))) return cb(null, sub)
        this.#log.warn(
          { event: 'broker_refused_subscription', clientId: client.id, topic: sub.topic },
          'broker refused a subscription',
        )
        cb(new Error('not authorized'))
      },
    })
    this.#aedes = aedes
    const server = createServer((socket) => {
      // Small messages, each waited for: never let Nagle hold one back.
      socket.setNoDelay(true)
      this.#sockets.add(socket)
      socket.on('close', () => this.#sockets.delete(socket))
      aedes.handle(socket)
    })
    this.#server = server
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.#options.port ?? 0, '127.0.0.1', () => resolve())
    })
    const addr = server.address()
    this.#port = typeof addr === 'object' && addr ? addr.port : 0
    if (this.#options.wsPort !== undefined) await this.#startWebSocket(aedes, this.#options.wsPort)
    this.#log.info(
      { port: this.#port, ...(this.#ws && { wsPort: this.#wsPort }) },
      'embedded broker listening on loopback',
    )
  }

  async #startWebSocket(aedes: Aedes, port: number): Promise<void> {
    const http = createHttpServer((_req, res) => {
      res.statusCode = 426
      res.end('MQTT over WebSocket only\n')
    })
    // Browsers offer the "mqtt" subprotocol; the reply must name it or they drop the connection.
    const wss = new WebSocketServer({
      server: http,
      handleProtocols: (offered) => (offered.has('mqtt') ? 'mqtt' : false),
    })
    wss.on('connection', (socket, req) => {
      const stream = createWebSocketStream(socket)
      stream.on('error', () => socket.terminate())
      aedes.handle(stream, req)
    })
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject)
      http.listen(port, '127.0.0.1', () => resolve())
    })
    const addr = http.address()
    this.#wsPort = typeof addr === 'object' && addr ? addr.port : 0
    this.#ws = { http, wss }
  }

  /** Stops listening and drops every connection (clients see the broker vanish). */
  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy()
    const ws = this.#ws
    this.#ws = undefined
    if (ws) {
      for (const c of ws.wss.clients) c.terminate()
      await new Promise<void>((resolve) => ws.wss.close(() => resolve()))
      await new Promise<void>((resolve) => ws.http.close(() => resolve()))
    }
    const server = this.#server
    const aedes = this.#aedes
    this.#server = undefined
    this.#aedes = undefined
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
    if (aedes) await new Promise<void>((resolve) => aedes.close(() => resolve()))
  }
}

function sameSecret(expected: string, given: Buffer): boolean {
  const a = Buffer.from(expected)
  return a.length === given.length && timingSafeEqual(a, given)
}

function underPrefix(prefix: string, topic: string): boolean {
  return topic === `${prefix}/#` || topic.startsWith(`${prefix}/`)
}

/**
 * Phones may publish only `<prefix>/<device>/approvals/<id>/decision` and
 * `<prefix>/<device>/conversations/request/<their own user name>`.
 */
export function mayPublish(
  role: BrokerRole | undefined,
  prefix: string,
  topic: string,
  username = '',
): boolean {
  if (!role || !underPrefix(prefix, topic) || /[+#]/.test(topic)) return false
  if (role === 'device') return true
  const rest = topic.slice(prefix.length + 1).split('/')
  if (rest.length === 4 && rest[1] === 'approvals' && rest[3] === 'decision') return true
  return (
    rest.length === 4 &&
    rest[1] === 'conversations' &&
    rest[2] === 'request' &&
    rest[3] === username
  )
}

/**
 * Phones may subscribe under the prefix, except to conversation replies that are not their own:
 * a filter that could match another phone's reply topic (`#`, `+` in its place) is refused.
 */
export function maySubscribe(
  role: BrokerRole | undefined,
  prefix: string,
  filter: string,
  username = '',
): boolean {
  if (!role || !underPrefix(prefix, filter)) return false
  if (role === 'device') return true
  const rest = filter.slice(prefix.length + 1).split('/')
  // Could this filter match some other phone's reply topic? A literal level stands for itself;
  // behind a wildcard, a name no phone can have stands in for "someone else".
  const literal = (level: string | undefined) =>
    level !== undefined && level !== '+' && level !== '#'
  const device = literal(rest[0]) ? (rest[0] as string) : 'd'
  const other = literal(rest[3]) && rest[3] !== username ? (rest[3] as string) : '\u0000'
  const mayReachReplies = filterMatches(rest, [device, 'conversations', 'reply', other])
  if (!mayReachReplies) return true
  return (
    rest.length === 4 && rest[1] === 'conversations' && rest[2] === 'reply' && rest[3] === username
  )
}

/** MQTT topic filter matching, level by level. */
function filterMatches(filter: readonly string[], topic: readonly string[]): boolean {
  for (let i = 0; i < filter.length; i++) {
    if (filter[i] === '#') return true
    if (i >= topic.length) return false
    if (filter[i] !== '+' && filter[i] !== topic[i]) return false
  }
  return filter.length === topic.length
}
