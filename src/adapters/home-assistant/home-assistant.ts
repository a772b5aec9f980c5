import type {
  Home,
  HomeArea,
  HomeEntity,
  HomeFloor,
  HomeSnapshot,
  ServiceCall,
} from '../../ports/home.js'
import { ServerFault } from '../../ports/tool-server.js'
import { HaSocket } from './socket.js'

export interface HaStatesOptions {
  /** HA's base URL, `http://homeassistant.local:8123`. */
  readonly url: string
  /** The long-lived access token, read when needed, never logged. */
  readonly token: () => string
  /** One request's limit. */
  readonly timeoutMs: number
}

type Row = Record<string, unknown>
const rows = (v: unknown): Row[] =>
  Array.isArray(v) ? v.filter((r): r is Row => typeof r === 'object' && r !== null) : []
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
const texts = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []

/**
 * Home Assistant's side of the `Home` port beside its tools (those come over MCP, `adapters/mcp/`):
 * over the WebSocket API the exposed entities (states, then the entity, area, floor and device
 * registries), exact service calls and state changes. The WebSocket sees every entity; only those
 * the household exposed to Assist are kept, so the speaker never matches anything else.
 */
export class HaStates implements Omit<Home, 'listTools' | 'callTool'> {
  readonly #socket: HaSocket

  constructor(o: HaStatesOptions) {
    const base = o.url.replace(/\/+$/, '')
    this.#socket = new HaSocket({
      url: `${base.replace(/^http/, 'ws')}/api/websocket`,
      token: o.token,
      timeoutMs: o.timeoutMs,
    })
  }

  async snapshot(signal?: AbortSignal): Promise<HomeSnapshot> {
    const cmd = (type: string, extra: Row = {}) => this.#socket.command({ type, ...extra }, signal)
    const [states, registry, areaRows, floorRows, deviceRows] = await Promise.all([
      cmd('get_states'),
      cmd('config/entity_registry/list'),
      cmd('config/area_registry/list'),
      cmd('config/floor_registry/list').catch(() => []),
      cmd('config/device_registry/list').catch(() => []),
    ])
    const exposed = new Map<string, Row>()
    for (const r of rows(registry)) {
      const id = text(r.entity_id)
      const options = (r.options ?? {}) as { conversation?: { should_expose?: unknown } }
      if (id && options.conversation?.should_expose === true) exposed.set(id, r)
    }
    // Aliases are only in the full entries.
    const full = rows([
      (await cmd('config/entity_registry/get_entries', { entity_ids: [...exposed.keys()] })) ?? {},
    ])[0] as Record<string, Row | null>
    const deviceArea = new Map<string, string>()
    for (const d of rows(deviceRows)) {
      const id = text(d.id)
      const area = text(d.area_id)
      if (id && area) deviceArea.set(id, area)
    }
    const entities: HomeEntity[] = []
    for (const s of rows(states)) {
      const id = text(s.entity_id)
      if (!id || !exposed.has(id)) continue
      const reg = exposed.get(id) as Row
      const entry = full[id] ?? {}
      const attrs = (s.attributes ?? {}) as Row
      const deviceClass =
        text(attrs.device_class) ?? text(entry.device_class) ?? text(entry.original_device_class)
      const areaId = text(reg.area_id) ?? deviceArea.get(text(reg.device_id) ?? '')
      entities.push({
        entityId: id,
        name: text(attrs.friendly_name) ?? text(reg.name) ?? id,
        aliases: texts(entry.aliases),
        domain: id.slice(0, id.indexOf('.')),
        ...(deviceClass && { deviceClass }),
        ...(areaId && { areaId }),
        state: text(s.state) ?? 'unknown',
      })
    }
    const areas: HomeArea[] = rows(areaRows).flatMap((a) => {
      const id = text(a.area_id)
      const name = text(a.name)
      const floorId = text(a.floor_id)
      return id && name
        ? [{ id, name, aliases: texts(a.aliases), ...(floorId && { floorId }) }]
        : []
    })
    const floors: HomeFloor[] = rows(floorRows).flatMap((f) => {
      const id = text(f.floor_id)
      const name = text(f.name)
      return id && name ? [{ id, name, aliases: texts(f.aliases) }] : []
    })
    return { entities, areas, floors }
  }

  async callService(call: ServiceCall, signal?: AbortSignal): Promise<void> {
    await this.#socket.command(
      {
        type: 'call_service',
        domain: call.domain,
        service: call.service,
        ...(call.data && { service_data: call.data }),
        target: { entity_id: [...call.entityIds] },
      },
      signal,
    )
  }

  async waitForStates(
    want: Readonly<Record<string, readonly string[]>>,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const pending = new Set(Object.keys(want))
    if (pending.size === 0) return true
    return new Promise<boolean>((resolve, reject) => {
      let stop: (() => void) | undefined
      let done = false
      const finish = (ok: boolean) => {
        if (done) return
        done = true
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        stop?.()
        resolve(ok)
      }
      const onAbort = () => finish(false)
      const timer = setTimeout(() => finish(false), timeoutMs)
      signal?.addEventListener('abort', onAbort, { once: true })
      const seen = (id: string, state: unknown) => {
        if (typeof state === 'string' && want[id]?.includes(state)) pending.delete(id)
        if (pending.size === 0) finish(true)
      }
      // Subscribe first, then read the states: a change between the two is not missed.
      this.#socket
        .subscribeStates((event) => {
          const data = (event.data ?? {}) as {
            entity_id?: unknown
            new_state?: { state?: unknown }
          }
          if (typeof data.entity_id === 'string') seen(data.entity_id, data.new_state?.state)
        })
        .then(async (unsubscribe) => {
          stop = unsubscribe
          if (done) return unsubscribe()
          const states = rows(await this.#socket.command({ type: 'get_states' }, signal))
          for (const s of states) if (typeof s.entity_id === 'string') seen(s.entity_id, s.state)
        })
        .catch((err: unknown) => {
          if (done) return
          done = true
          clearTimeout(timer)
          signal?.removeEventListener('abort', onAbort)
          stop?.()
          reject(err instanceof ServerFault ? err : new ServerFault('unreachable', String(err)))
        })
    })
  }

  close(): void {
    this.#socket.close()
  }
}
