import WebSocket from 'ws'
import { ServerFault } from '../../ports/tool-server.js'

const WENT_AWAY = 'Home Assistant went away'

type Listener = (event: Record<string, unknown>) => void

interface Pending {
  resolve(result: unknown): void
  reject(err: Error): void
  timer: NodeJS.Timeout
}

export interface HaSocketOptions {
  /** `ws://host:8123/api/websocket`. */
  readonly url: string
  readonly token: () => string
  /** How long one command may take before it fails as `timeout`. */
  readonly timeoutMs: number
}

/**
 * One authenticated connection to HA's WebSocket API, opened on first use and again on the next
 * command after it drops (HA restarting). Commands are numbered and answered by id; events reach
 * the listener of the subscription that asked for them. The token goes only in the `auth` message.
 */
export class HaSocket {
  readonly #o: HaSocketOptions
  #ws: WebSocket | undefined
  #ready: Promise<WebSocket> | undefined
  #next = 1
  readonly #pending = new Map<number, Pending>()
  readonly #listeners = new Map<number, Listener>()
  #closed = false

  constructor(options: HaSocketOptions) {
    this.#o = options
  }

  /** Sends one command and resolves with its `result`; a refusal is a `ServerFault('refused')`. */
  async command(msg: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    try {
      return await this.#send(await this.#open(), msg, signal)
    } catch (err) {
      // A connection HA dropped as it restarted: a read is asked again on a fresh one. A service
      // call is not — it may have run before the drop, and a script must not run twice.
      const dropped = err instanceof ServerFault && err.message === WENT_AWAY
      if (!dropped || msg.type === 'call_service' || signal?.aborted) throw err
      return this.#send(await this.#open(), msg, signal)
    }
  }

  /**
   * Subscribes to `state_changed` until the returned function is called. The subscription lives
   * on this connection: a dropped connection ends it (the caller learns from `command` next).
   */
  async subscribeStates(listener: Listener): Promise<() => void> {
    const ws = await this.#open()
    const id = this.#next
    this.#listeners.set(id, listener)
    try {
      await this.#send(ws, { type: 'subscribe_events', event_type: 'state_changed' })
    } catch (err) {
      this.#listeners.delete(id)
      throw err
    }
    return () => {
      this.#listeners.delete(id)
      if (ws.readyState === WebSocket.OPEN) {
        void this.#send(ws, { type: 'unsubscribe_events', subscription: id }).catch(() => {})
      }
    }
  }

  close(): void {
    this.#closed = true
    this.#ws?.terminate()
    this.#ws = undefined
    this.#ready = undefined
  }

  #send(ws: WebSocket, msg: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    const id = this.#next++
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer)
        this.#pending.delete(id)
        reject(new ServerFault('timeout', 'withdrawn'))
      }
      // Every way out removes the abort listener: one signal serves many commands.
      const settle = (fn: () => void) => {
        signal?.removeEventListener('abort', onAbort)
        fn()
      }
      const timer = setTimeout(() => {
        this.#pending.delete(id)
        settle(() =>
          reject(
            new ServerFault('timeout', `Home Assistant did not answer ${String(msg.type)} in time`),
          ),
        )
      }, this.#o.timeoutMs)
      this.#pending.set(id, {
        resolve: (v) => settle(() => resolve(v)),
        reject: (e) => settle(() => reject(e)),
        timer,
      })
      signal?.addEventListener('abort', onAbort, { once: true })
      ws.send(JSON.stringify({ ...msg, id }))
    })
  }

  #open(): Promise<WebSocket> {
    if (this.#closed) return Promise.reject(new ServerFault('unreachable', 'closed'))
    if (this.#ready && this.#ws?.readyState === WebSocket.OPEN) return this.#ready
    if (this.#ready && this.#ws?.readyState === WebSocket.CONNECTING) return this.#ready
    this.#ready = this.#connect()
    this.#ready.catch(() => {
      this.#ready = undefined
    })
    return this.#ready
  }

  #connect(): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.#o.url, { handshakeTimeout: this.#o.timeoutMs })
      this.#ws = ws
      let settled = false
      const fail = (err: ServerFault) => {
        if (settled) return
        settled = true
        ws.terminate()
        reject(err)
      }
      const timer = setTimeout(
        () =>
          fail(new ServerFault('timeout', 'Home Assistant did not finish the handshake in time')),
        this.#o.timeoutMs,
      )
      ws.on('error', (err) => {
        clearTimeout(timer)
        fail(new ServerFault('unreachable', `Home Assistant's WebSocket: ${err.message}`))
      })
      ws.on('close', () => {
        clearTimeout(timer)
        fail(new ServerFault('unreachable', "Home Assistant's WebSocket closed"))
        if (this.#ws === ws) {
          this.#ws = undefined
          this.#ready = undefined
        }
        for (const [id, p] of this.#pending) {
          clearTimeout(p.timer)
          p.reject(new ServerFault('unreachable', WENT_AWAY))
          this.#pending.delete(id)
        }
        this.#listeners.clear()
      })
      ws.on('message', (raw) => {
        let msg: Record<string, unknown>
        try {
          msg = JSON.parse(String(raw)) as Record<string, unknown>
        } catch {
          return
        }
        if (!settled) {
          if (msg.type === 'auth_required') {
            ws.send(JSON.stringify({ type: 'auth', access_token: this.#o.token() }))
          } else if (msg.type === 'auth_ok') {
            settled = true
            clearTimeout(timer)
            resolve(ws)
          } else if (msg.type === 'auth_invalid') {
            clearTimeout(timer)
            fail(new ServerFault('unauthorized', 'Home Assistant refused the access token'))
          }
          return
        }
        this.#receive(msg)
      })
    })
  }

  #receive(msg: Record<string, unknown>): void {
    const id = typeof msg.id === 'number' ? msg.id : -1
    if (msg.type === 'event') {
      const listener = this.#listeners.get(id)
      if (listener && typeof msg.event === 'object' && msg.event !== null) {
        listener(msg.event as Record<string, unknown>)
      }
      return
    }
    const p = this.#pending.get(id)
    if (!p) return
    this.#pending.delete(id)
    clearTimeout(p.timer)
    if (msg.type === 'pong' || msg.success === true) {
      p.resolve(msg.type === 'pong' ? null : msg.result)
      return
    }
    const error = (msg.error ?? {}) as { code?: unknown; message?: unknown }
    p.reject(
      new ServerFault(
        error.code === 'unauthorized' ? 'unauthorized' : 'refused',
        typeof error.message === 'string' ? error.message : 'refused',
      ),
    )
  }
}
