import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { WebSocketServer } from 'ws'

/**
 * What the fake live services (fake-live-server/, fake-realtime-server/) stand on: one HTTP server
 * on the loopback that answers REST and upgrades to WebSocket, and `until`, a condition re-checked
 * whenever the fake says something happened (`wake`), or every 50 ms.
 */
export class LoopbackService {
  readonly wss = new WebSocketServer({ noServer: true })
  readonly #http: Server
  readonly #waiters = new Set<() => void>()
  readonly #name: string
  #port = 0

  constructor(o: {
    /** How `until` names the fake when a condition is not met. */
    name: string
    rest: (req: IncomingMessage, res: ServerResponse) => Promise<void>
    /** A REST answer that threw: how this fake ends the request. */
    restFailed: (err: unknown, res: ServerResponse) => void
    upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void
  }) {
    this.#name = o.name
    this.#http = createServer((req, res) => {
      o.rest(req, res).catch((err: unknown) => o.restFailed(err, res))
    })
    this.#http.on('upgrade', o.upgrade)
  }

  async listen(port = 0): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#http.once('error', reject)
      this.#http.listen(port, '127.0.0.1', () => resolve())
    })
    this.#port = (this.#http.address() as AddressInfo).port
  }

  get port(): number {
    return this.#port
  }

  /** Something happened: every `until` looks again. */
  wake(): void {
    for (const w of [...this.#waiters]) w()
  }

  /** Resolves once `check()` holds, re-checking at every `wake()`. */
  async until<T>(check: () => T | undefined | false, timeoutMs = 3000): Promise<T> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const v = check()
      if (v !== undefined && v !== false) return v
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`${this.#name}: condition not met in time`)
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t)
          this.#waiters.delete(done)
          resolve()
        }
        const t = setTimeout(done, Math.min(left, 50))
        this.#waiters.add(done)
      })
    }
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate()
    await new Promise<void>((resolve) => this.wss.close(() => resolve()))
    await new Promise<void>((resolve) => this.#http.close(() => resolve()))
  }
}
