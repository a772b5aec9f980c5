import { domainOf, type FakeEntity, type FakeHouse, type MatchSlots } from './house.js'

/**
 * The Assist API's tools as HA's MCP server lists them (`mcp_server/server.py` `_format_tool`:
 * `{type: "object", properties}` from voluptuous_openapi, no `required`), with the slot schema of
 * `helpers/intent.py` (`DynamicServiceIntentHandler.slot_schema`: name, area, floor, domain,
 * device_class) and the descriptions of `components/intent/__init__.py` and `helpers/llm.py`.
 * `names: '2026.9'` serves them as HA 2026.9 does, each with its owning domain
 * (`intent__HassTurnOn`); `'legacy'` as before (`HassTurnOn`).
 */
export type ToolNaming = '2026.9' | 'legacy'

export interface AssistTool {
  readonly name: string
  readonly description: string
  readonly inputSchema: { type: 'object'; properties: Record<string, unknown> }
}

const str = (description?: string) => ({ type: 'string', ...(description && { description }) })
const list = (items: Record<string, unknown> = { type: 'string' }) => ({ type: 'array', items })

/** Device classes HassTurnOn/Off accept (cover, valve, switch, media_player classes). */
const DEVICE_CLASSES = [
  'awning',
  'blind',
  'curtain',
  'damper',
  'door',
  'garage',
  'gate',
  'shade',
  'shutter',
  'window',
  'water',
  'gas',
  'outlet',
  'switch',
  'tv',
  'speaker',
  'receiver',
]

const TARGET = {
  name: str(),
  area: str(),
  floor: str(),
  domain: list(),
  device_class: list({ type: 'string', enum: DEVICE_CLASSES }),
}

interface Spec {
  readonly domain: string
  readonly bare: string
  readonly description: string
  readonly properties: Record<string, unknown>
  /** Served only when an exposed entity of one of these domains exists (`platforms`). */
  readonly platforms?: readonly string[]
}

const SPECS: readonly Spec[] = [
  {
    domain: 'intent',
    bare: 'HassTurnOn',
    description: 'Turns on/opens a device or entity',
    properties: TARGET,
  },
  {
    domain: 'intent',
    bare: 'HassTurnOff',
    description: 'Turns off/closes a device or entity',
    properties: TARGET,
  },
  {
    domain: 'intent',
    bare: 'HassSetPosition',
    description: 'Sets the position of a device or entity',
    properties: { ...TARGET, position: { type: 'integer', minimum: 0, maximum: 100 } },
    platforms: ['cover', 'valve'],
  },
  {
    domain: 'light',
    bare: 'HassLightSet',
    description: 'Sets the brightness percentage or color of a light',
    properties: {
      name: str(),
      area: str(),
      floor: str(),
      domain: list(),
      brightness: {
        type: 'integer',
        minimum: 0,
        maximum: 100,
        description:
          'The brightness percentage of the light between 0 and 100, where 0 is off and 100 is fully lit',
      },
      color: str(),
      temperature: { type: 'integer', minimum: 0 },
    },
    platforms: ['light'],
  },
  {
    domain: 'climate',
    bare: 'HassClimateSetTemperature',
    description: 'Sets the target temperature of a climate device or entity',
    properties: { name: str(), area: str(), floor: str(), temperature: { type: 'number' } },
    platforms: ['climate'],
  },
  {
    domain: 'todo',
    bare: 'HassListAddItem',
    description: 'Add item to a todo list',
    properties: { item: str(), name: str() },
    platforms: ['todo'],
  },
  {
    domain: 'homeassistant',
    bare: 'GetLiveContext',
    description:
      "Provides real-time information about the CURRENT state, value, or mode of devices, sensors, entities, or areas. Use this tool for: 1. Answering questions about current conditions (e.g., 'Is the light on?'). 2. As the first step in conditional actions. You may filter for devices by name, domain, and area, including combining those filters. Prefer filtering by domain when searching for multiple devices of the same type.",
    properties: {
      name: str('Filter entities by name or alias (case-insensitive).'),
      domain: {
        anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
        description:
          "Filter entities by domain (e.g. 'light', 'sensor'). Accepts a single domain or a list.",
      },
      area: str('Filter entities by area name or alias (case-insensitive).'),
    },
  },
  {
    domain: 'llm',
    bare: 'GetDateTime',
    description: 'Provides the current date and time.',
    properties: {},
  },
]

function named(spec: Pick<Spec, 'domain' | 'bare'>, naming: ToolNaming): string {
  return naming === '2026.9' ? `${spec.domain}__${spec.bare}` : spec.bare
}

/** What `tools/list` answers for this house. */
export function listAssistTools(house: FakeHouse, naming: ToolNaming): AssistTool[] {
  const domains = new Set(house.exposed().map((x) => domainOf(x.entityId)))
  const tools: AssistTool[] = SPECS.filter(
    (s) => !s.platforms || s.platforms.some((p) => domains.has(p)),
  ).map((s) => ({
    name: named(s, naming),
    description: s.description,
    inputSchema: { type: 'object', properties: s.properties },
  }))
  for (const script of house.exposed().filter((x) => domainOf(x.entityId) === 'script')) {
    const id = script.entityId.slice('script.'.length)
    tools.push({
      name: naming === '2026.9' ? `script__${id}` : id,
      description: script.description ?? '',
      inputSchema: { type: 'object', properties: {} },
    })
  }
  return tools
}

/** A tool call's answer as HA's MCP server sends it: one text content, `isError` on failure. */
export interface ToolAnswer {
  readonly text: string
  readonly isError: boolean
}

const fail = (message: string): ToolAnswer => ({
  text: `Error calling tool: ${message}`,
  isError: true,
})

/** An intent's answer (`IntentResponse.as_dict()` without language and card, helpers/llm.py). */
function done(entities: readonly FakeEntity[]): ToolAnswer {
  return {
    isError: false,
    text: JSON.stringify({
      speech: {},
      response_type: 'action_done',
      data: {
        targets: [],
        success: entities.map((x) => ({ name: x.name, type: 'entity', id: x.entityId })),
        failed: [],
      },
    }),
  }
}

/** Runs `tools/call` as HA's Assist API would, services included. */
export function callAssistTool(
  house: FakeHouse,
  naming: ToolNaming,
  name: string,
  args: Record<string, unknown>,
): ToolAnswer {
  const tool = listAssistTools(house, naming).find((t) => t.name === name)
  if (!tool) return fail(`Tool "${name}" not found`)
  const bare = naming === '2026.9' ? name.slice(name.indexOf('__') + 2) : name
  const slots: MatchSlots = {
    ...(typeof args.name === 'string' && { name: args.name }),
    ...(typeof args.area === 'string' && { area: args.area }),
    ...(typeof args.floor === 'string' && { floor: args.floor }),
    ...(args.domain !== undefined && { domain: ([] as string[]).concat(args.domain as string) }),
    ...(args.device_class !== undefined && {
      device_class: ([] as string[]).concat(args.device_class as string),
    }),
  }
  const matchOr = (domains?: string[]) => {
    const m = house.match(domains && !slots.domain ? { ...slots, domain: domains } : slots)
    if (!m.ok) {
      throw new Error(
        `MatchFailedError(result=MatchTargetsResult(is_match=False, no_match_reason=<MatchFailedReason.${m.reason}>))`,
      )
    }
    return m.entities
  }
  /** The intent's one service call on each entity it matches in `domains`, with `data`. */
  const setEach = (
    domains: string[],
    data: Record<string, unknown>,
    service: (entityDomain: string) => readonly [domain: string, service: string],
  ) => {
    const hit = matchOr(domains)
    for (const x of hit) {
      const [domain, name] = service(domainOf(x.entityId))
      house.callService(domain, name, [x.entityId], data, 'intent')
    }
    return done(hit)
  }
  try {
    switch (bare) {
      case 'HassTurnOn':
      case 'HassTurnOff': {
        if (!slots.name && !slots.area && !slots.floor && !slots.domain && !slots.device_class) {
          return fail("must contain at least one of 'name', 'area', 'floor'")
        }
        const on = bare === 'HassTurnOn'
        const hit = matchOr()
        for (const x of hit) {
          const d = domainOf(x.entityId)
          const service =
            d === 'lock'
              ? on
                ? 'lock'
                : 'unlock'
              : d === 'cover'
                ? on
                  ? 'open_cover'
                  : 'close_cover'
                : d === 'valve'
                  ? on
                    ? 'open_valve'
                    : 'close_valve'
                  : on
                    ? 'turn_on'
                    : 'turn_off'
          house.callService(
            d === 'lock' || d === 'cover' || d === 'valve' || d === 'script' ? d : 'homeassistant',
            service,
            [x.entityId],
            {},
            'intent',
          )
        }
        return done(hit)
      }
      case 'HassSetPosition':
        return setEach(['cover', 'valve'], { position: args.position }, (d) => [
          d,
          d === 'valve' ? 'set_valve_position' : 'set_cover_position',
        ])
      case 'HassLightSet':
        return setEach(['light'], { brightness_pct: args.brightness }, () => ['light', 'turn_on'])
      case 'HassClimateSetTemperature':
        return setEach(['climate'], { temperature: args.temperature }, () => [
          'climate',
          'set_temperature',
        ])
      case 'HassListAddItem':
        return done(matchOr(['todo']))
      case 'GetLiveContext':
        return {
          isError: false,
          text: JSON.stringify({ success: true, result: liveContext(house) }),
        }
      case 'GetDateTime':
        return {
          isError: false,
          text: JSON.stringify({
            success: true,
            result: { date: '2026-12-05', time: '12:00:00', timezone: 'UTC', weekday: 'Saturday' },
          }),
        }
      default: {
        const script = house.entity(`script.${bare}`)
        if (!script) return fail(`Tool "${name}" not found`)
        house.callService('script', 'turn_on', [script.entityId], {}, 'intent')
        return { isError: false, text: JSON.stringify({ success: true, result: null }) }
      }
    }
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err))
  }
}

/** GetLiveContext's YAML-ish overview: names, domain, state, areas — no entity ids (helpers/llm.py). */
function liveContext(house: FakeHouse): string {
  const lines = ['Live Context: An overview of the areas and the devices in this smart home:']
  for (const x of house.exposed()) {
    const area = house.areas.find((a) => a.id === x.areaId)?.name
    lines.push(`- names: ${[x.name, ...x.aliases].join(', ')}`)
    lines.push(`  domain: ${domainOf(x.entityId)}`)
    lines.push(`  state: '${x.state}'`)
    if (area) lines.push(`  areas: ${area}`)
  }
  return lines.join('\n')
}
