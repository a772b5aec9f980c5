import type { WebSocket } from 'ws'
import { domainOf, type FakeHouse } from './house.js'

/**
 * HA's WebSocket API (`components/websocket_api/`: `auth.py`, `commands.py`; the registries'
 * `config/*_registry/list` commands), for the commands the speaker uses: `auth_required` →
 * `auth` → `auth_ok` | `auth_invalid`; `get_states`, `call_service`, `subscribe_events`
 * (state_changed), the entity, area, floor and device registries, `ping`.
 */
export interface SocketServing {
  readonly house: FakeHouse
  readonly version: string
  tokenOk(token: unknown): boolean
  /** Extra delay before each answer (a slow HA). */
  delayMs(): number
}

export function serveSocket(ws: WebSocket, s: SocketServing): void {
  let authed = false
  const unsubscribe: (() => void)[] = []
  const send = (msg: unknown) => {
    const out = () => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg))
    }
    const ms = s.delayMs()
    if (ms > 0) setTimeout(out, ms)
    else out()
  }
  ws.on('close', () => {
    for (const u of unsubscribe) u()
  })
  send({ type: 'auth_required', ha_version: s.version })
  ws.on('message', (raw) => {
    let msg: Record<string, unknown>
    try {
      msg = JSON.parse(String(raw))
    } catch {
      ws.close(1003)
      return
    }
    if (!authed) {
      if (msg.type === 'auth' && s.tokenOk(msg.access_token)) {
        authed = true
        send({ type: 'auth_ok', ha_version: s.version })
      } else {
        send({ type: 'auth_invalid', message: 'Invalid access token or password' })
        setTimeout(() => ws.close(), 10)
      }
      return
    }
    const id = msg.id
    const ok = (result: unknown) => send({ id, type: 'result', success: true, result })
    const err = (code: string, message: string) =>
      send({ id, type: 'result', success: false, error: { code, message } })
    const { house } = s
    switch (msg.type) {
      case 'ping':
        send({ id, type: 'pong' })
        return
      case 'get_states':
        ok(
          house.entities.map((x) => ({
            entity_id: x.entityId,
            state: x.state,
            attributes: {
              friendly_name: x.name,
              ...(x.deviceClass && { device_class: x.deviceClass }),
            },
            last_changed: '2026-12-05T12:00:00+00:00',
            last_updated: '2026-12-05T12:00:00+00:00',
            context: { id: '01J', parent_id: null, user_id: null },
          })),
        )
        return
      case 'config/entity_registry/list':
        ok(
          house.entities.map((x) => ({
            entity_id: x.entityId,
            area_id: x.areaId ?? null,
            device_id: null,
            name: x.name,
            original_name: x.name,
            platform: domainOf(x.entityId),
            disabled_by: null,
            hidden_by: null,
            options: { conversation: { should_expose: x.exposed } },
          })),
        )
        return
      case 'config/entity_registry/get_entries': {
        const ids = Array.isArray(msg.entity_ids) ? (msg.entity_ids as string[]) : []
        const out: Record<string, unknown> = {}
        for (const id of ids) {
          const x = house.entity(id)
          out[id] = x
            ? {
                entity_id: x.entityId,
                area_id: x.areaId ?? null,
                aliases: x.aliases,
                device_class: null,
                original_device_class: x.deviceClass ?? null,
                name: x.name,
              }
            : null
        }
        ok(out)
        return
      }
      case 'config/area_registry/list':
        ok(
          house.areas.map((a) => ({
            area_id: a.id,
            name: a.name,
            aliases: a.aliases,
            floor_id: a.floorId ?? null,
          })),
        )
        return
      case 'config/floor_registry/list':
        ok(
          house.floors.map((f) => ({
            floor_id: f.id,
            name: f.name,
            aliases: f.aliases,
            level: null,
          })),
        )
        return
      case 'config/device_registry/list':
        ok([])
        return
      case 'subscribe_events': {
        if (msg.event_type !== 'state_changed') {
          ok(null)
          return
        }
        unsubscribe.push(
          house.onChange((c) => {
            const x = house.entity(c.entityId)
            const state = (v: string) => ({
              entity_id: c.entityId,
              state: v,
              attributes: { friendly_name: x?.name },
            })
            send({
              id,
              type: 'event',
              event: {
                event_type: 'state_changed',
                data: {
                  entity_id: c.entityId,
                  old_state: state(c.oldState),
                  new_state: state(c.newState),
                },
              },
            })
          }),
        )
        ok(null)
        return
      }
      case 'call_service': {
        const domain = String(msg.domain)
        const service = String(msg.service)
        const target = (msg.target ?? {}) as { entity_id?: string | string[] }
        const ids = ([] as string[]).concat(target.entity_id ?? [])
        if (
          ![
            'lock',
            'cover',
            'valve',
            'light',
            'switch',
            'script',
            'climate',
            'homeassistant',
            'fan',
          ].includes(domain)
        ) {
          err('not_found', `Action ${domain}.${service} not found.`)
          return
        }
        try {
          house.callService(
            domain,
            service,
            ids,
            (msg.service_data ?? {}) as Record<string, unknown>,
            'websocket',
          )
          ok({ context: { id: '01K', parent_id: null, user_id: 'nocturn' }, response: null })
        } catch (e) {
          err('home_assistant_error', e instanceof Error ? e.message : String(e))
        }
        return
      }
      default:
        err('unknown_command', 'Unknown command.')
    }
  })
}
