import { errorText, NocturnError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { CallContext, PreparedCall, Tool } from '../core/types.js'
import type { Home, HomeEntity, HomeSnapshot } from '../ports/home.js'
import { ServerFault, type ToolInfo } from '../ports/tool-server.js'
import { actionFor, type EntityAction } from './actions.js'
import { type CriticalPolicy, isCritical } from './criticality.js'
import { fitSchema } from './fit-schema.js'
import { type HomeIntent, intentOf, splitToolName } from './intents.js'
import { normalName, resolveTargets, slotsOf, type TargetSlots } from './resolve.js'
import { homeFaultError, readToolReply } from './tool-reply.js'

export interface HomeToolDeps {
  readonly home: Home
  /** The speaker's copy of what the home exposes; undefined until it was first read. */
  snapshot(): HomeSnapshot | undefined
  /** A fresh copy, read just before an approved action runs; it also replaces the kept one. */
  refresh(signal?: AbortSignal): Promise<HomeSnapshot>
  readonly policy: CriticalPolicy
  /** The speaker's own area (name or id), preferred when a call names none. */
  readonly area?: string | undefined
  /** How long a state change may take to show before the answer says "not confirmed". */
  readonly confirmMs: number
  readonly logger: Logger
}

/** An entity and what the call does to it: one line of the phone's card. */
interface Step {
  readonly entity: HomeEntity
  readonly action: EntityAction
}

/**
 * One of the home's tools as a Nocturn tool. Its danger is decided per call (`prepare`): the call's
 * name, area, floor, domain and device class are resolved against the speaker's copy of the home,
 * and the call is critical when any entity it can match would be unlocked, opened (an entrance or a
 * valve), disarmed, or a script not marked safe would run — or when the speaker cannot tell what it
 * matches. A critical call, once a phone said yes, runs as exact service calls on the entity ids
 * the phone saw; everything else goes to the home's own tool at once.
 */
export function homeTool(info: ToolInfo, deps: HomeToolDeps): Tool<Record<string, unknown>> {
  const { bare } = splitToolName(info.name)
  const areaNote = deps.area
    ? ` This speaker is in the ${deps.area}; a request that names no area means the ${deps.area}.`
    : ''
  return {
    name: info.name,
    description: `${info.description || `Home Assistant: ${bare}`}${areaNote}`.slice(0, 1000),
    parameters: fitSchema(info.inputSchema),
    // A call that can only touch harmless things runs at once, by voice too; critical ones ask.
    policy: { voice: 'allow', text: 'allow' },
    describe: (args) => prepareCall(info, deps, args).action,
    prepare: (args) => prepareCall(info, deps, args),
    call: (ctx, args) => prepareCall(info, deps, args).run(ctx),
  }
}

/** 2026.9 prefixes that name no device domain. */
const GENERIC = new Set(['intent', 'homeassistant', 'llm', 'assist_satellite'])

function takesTargets(info: ToolInfo): boolean {
  const props = (info.inputSchema as { properties?: Record<string, unknown> } | null)?.properties
  return ['name', 'area', 'floor', 'domain', 'device_class'].some((k) => props?.[k] !== undefined)
}

function scriptIds(home: HomeSnapshot | undefined): Set<string> {
  const ids = new Set<string>()
  for (const e of home?.entities ?? []) {
    if (e.domain === 'script') ids.add(e.entityId.slice('script.'.length))
  }
  return ids
}

function prepareCall(
  info: ToolInfo,
  deps: HomeToolDeps,
  rawArgs: Record<string, unknown>,
): PreparedCall {
  const args = rawArgs ?? {}
  const home = deps.snapshot()
  const intent = intentOf(info.name, scriptIds(home))
  const { bare } = splitToolName(info.name)
  const viaHome = (sent: Record<string, unknown>) => (ctx: CallContext) =>
    callHomeTool(deps, info.name, sent, ctx)
  if (intent === 'read') {
    return { critical: false, action: `ask Home Assistant (${bare})`, run: viaHome(args) }
  }
  if (!home) {
    throw new NocturnError(
      'NOC_ERR_HOME_UNREACHABLE',
      "I can't reach Home Assistant right now, so I did nothing.",
    )
  }
  if (intent === 'unknown') {
    // A tool this speaker cannot read: it might do anything, so a phone decides, told as much.
    return {
      critical: true,
      action: `Run "${bare}" in Home Assistant (${summarise(args)})`,
      run: viaHome(args),
    }
  }
  if (intent === 'script') {
    const id = `script.${bare.replace(/^_(?=\d)/, '')}`
    const entity = home.entities.find((e) => e.entityId === id)
    if (!entity) {
      return {
        critical: true,
        action: `Run script "${bare}" in Home Assistant`,
        run: viaHome(args),
      }
    }
    const step: Step = { entity, action: actionFor('script', entity, args) }
    return plan([step], false, intent, deps, viaHome(args))
  }
  let given = slotsOf(args)
  const named = [given.name, given.area, given.floor].some((v) => v !== undefined)
  if (!named && !given.domain?.length && !given.deviceClass?.length) {
    // No target at all. A tool that takes none (a broadcast) touches no device; a setting owned
    // by a domain (`light__HassLightSet`) means that domain, here first; a switch with none would
    // be a sweep nobody asked for, so a person decides.
    const { domain } = splitToolName(info.name)
    if (!takesTargets(info)) {
      return { critical: false, action: `ask Home Assistant (${bare})`, run: viaHome(args) }
    }
    if (intent === 'adjust' && domain && !GENERIC.has(domain)) {
      given = { ...given, domain: [domain] }
    } else {
      return {
        critical: true,
        action: `${verbOf(intent)} — no device named (${summarise(args)})`,
        run: viaHome(args),
      }
    }
  }
  const slots = preferSpeakerArea(home, given, deps.area)
  const sent =
    slots.area !== undefined && args.area === undefined ? { ...args, area: slots.area } : args
  const found = resolveTargets(home, slots)
  if (found.kind === 'unresolved') {
    // HA may know what the speaker's copy does not (a device added a moment ago): a phone decides.
    return {
      critical: true,
      action: `${verbOf(intent)} ${describeSlots(slots)} — not found on the speaker (${found.why})`,
      run: viaHome(sent),
    }
  }
  const steps = found.entities.map((entity) => ({
    entity,
    action: actionFor(intent, entity, args),
  }))
  return plan(steps, found.kind === 'ambiguous', intent, deps, viaHome(sent))
}

/** Critical or not, the card's sentence, the ids, and how it runs. */
function plan(
  steps: readonly Step[],
  ambiguous: boolean,
  intent: HomeIntent,
  deps: HomeToolDeps,
  viaHome: (ctx: CallContext) => Promise<unknown>,
): PreparedCall {
  const home = deps.snapshot()
  const critical = ambiguous || steps.some((s) => isCritical(s.action, s.entity, deps.policy))
  const action = cardSentence(steps, home)
  const targets = steps.map((s) => s.entity.entityId)
  // Whatever switches, locks, opens or runs acts on the ids it was judged by, one-shot too: HA
  // matching the name again from a stale copy could reach a device nobody judged.
  const exact = critical || steps.every((s) => s.action.service !== undefined)
  if (!exact) return { critical, action, targets, run: viaHome }
  return {
    critical,
    action,
    targets,
    run: (ctx) => runExactly(steps, intent, deps, ctx, { recheck: critical }),
  }
}

/**
 * "Unlock Front Door — Hall": each entity by its friendly name and area, grouped by what happens
 * to it, so a sweep lists every lock it would open.
 */
function cardSentence(steps: readonly Step[], home: HomeSnapshot | undefined): string {
  const byVerb = new Map<string, string[]>()
  for (const { entity, action } of steps) {
    const area = home?.areas.find((a) => a.id === entity.areaId)?.name
    const label = area ? `${entity.name} — ${area}` : entity.name
    byVerb.set(action.verb, [...(byVerb.get(action.verb) ?? []), label])
  }
  const parts = [...byVerb].map(([verb, labels]) => `${verb} ${labels.join(', ')}`)
  const sentence = parts.join('; ')
  return sentence.length > 1000 ? `${sentence.slice(0, 990)}… (${steps.length})` : sentence
}

/**
 * The same entities by exact service calls, then confirmed by their states. After a yes
 * (`recheck`) they must still be there, named and placed as the phone showed them.
 */
async function runExactly(
  steps: readonly Step[],
  intent: HomeIntent,
  deps: HomeToolDeps,
  ctx: CallContext,
  how: { readonly recheck: boolean },
): Promise<unknown> {
  const log = ctx.logger.child({ component: 'home' })
  if (how.recheck) await recheck(steps, deps, ctx, log)
  const missing = steps.find((s) => !s.action.service)
  if (missing) {
    throw new NocturnError(
      'NOC_ERR_HOME_FAILED',
      `I can't ${verbOf(intent).toLowerCase()} ${missing.entity.name} on exactly the approved device, so I did nothing.`,
    )
  }
  return act(steps, deps, ctx, log)
}

/** Refuses, never redirects, when an approved entity is gone, renamed or moved. */
async function recheck(
  steps: readonly Step[],
  deps: HomeToolDeps,
  ctx: CallContext,
  log: Logger,
): Promise<void> {
  let now: HomeSnapshot
  try {
    now = await deps.refresh(ctx.signal)
  } catch (err) {
    throw asNocturn(err, log)
  }
  for (const { entity } of steps) {
    const current = now.entities.find((e) => e.entityId === entity.entityId)
    if (!current) {
      log.warn({ event: 'home_target_removed', entity: entity.entityId }, 'approved entity is gone')
      throw new NocturnError(
        'NOC_ERR_HOME_CHANGED',
        `${entity.name} is no longer in Home Assistant, so I did nothing.`,
      )
    }
    if (normalName(current.name) !== normalName(entity.name) || current.areaId !== entity.areaId) {
      log.warn(
        { event: 'home_target_changed', entity: entity.entityId },
        'approved entity was renamed or moved',
      )
      throw new NocturnError(
        'NOC_ERR_HOME_CHANGED',
        `${entity.name} was renamed or moved in Home Assistant after it was approved, so I did nothing. Ask again if it is still wanted.`,
      )
    }
  }
}

async function act(
  steps: readonly Step[],
  deps: HomeToolDeps,
  ctx: CallContext,
  log: Logger,
): Promise<unknown> {
  for (const { entity, action } of steps) {
    const s = action.service as NonNullable<EntityAction['service']>
    try {
      await deps.home.callService(
        {
          domain: s.domain,
          service: s.service,
          entityIds: [entity.entityId],
          ...(s.data && { data: s.data }),
        },
        ctx.signal,
      )
    } catch (err) {
      throw asNocturn(err, log)
    }
    log.info(
      { entity: entity.entityId, service: `${s.domain}.${s.service}` },
      'home service called',
    )
  }
  const want: Record<string, readonly string[]> = {}
  for (const { entity, action } of steps) if (action.expect) want[entity.entityId] = action.expect
  const names = steps.map((s) => s.entity.name).join(', ')
  if (Object.keys(want).length === 0) {
    return {
      done: true,
      result: `${steps[0]?.action.verb ?? 'Ran'} ${names}: Home Assistant accepted it.`,
    }
  }
  let confirmed = false
  try {
    confirmed = await deps.home.waitForStates(want, deps.confirmMs, ctx.signal)
  } catch (err) {
    log.warn({ event: 'home_confirm_failed', err: errorText(err) }, 'state change not confirmed')
  }
  const states = await statesOf(deps, Object.keys(want), ctx.signal)
  if (confirmed)
    return { done: true, confirmed: true, states, result: `${describeStates(steps, states)}.` }
  log.warn(
    { event: 'home_not_confirmed', entities: Object.keys(want) },
    'state change not confirmed',
  )
  return {
    done: false,
    confirmed: false,
    states,
    result: `Home Assistant accepted the command for ${names}, but the state did not change within ${Math.round(deps.confirmMs / 1000)} s, so it is not confirmed: a device can accept a command and not carry it out.`,
  }
}

async function statesOf(
  deps: HomeToolDeps,
  ids: readonly string[],
  signal: AbortSignal,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  try {
    const now = await deps.refresh(signal)
    for (const id of ids) {
      const e = now.entities.find((x) => x.entityId === id)
      if (e) out[id] = e.state
    }
  } catch {
    // The states are a courtesy; what was confirmed is already known.
  }
  return out
}

function describeStates(steps: readonly Step[], states: Record<string, string>): string {
  return steps
    .map((s) => `${s.entity.name} is ${states[s.entity.entityId] ?? 'changed'}`)
    .join(', ')
}

/** The home's own tool: HA matches the names itself; what it says back is checked and cut. */
async function callHomeTool(
  deps: HomeToolDeps,
  name: string,
  args: Record<string, unknown>,
  ctx: CallContext,
): Promise<unknown> {
  const log = ctx.logger.child({ component: 'home' })
  let reply: Awaited<ReturnType<Home['callTool']>>
  try {
    reply = await deps.home.callTool(name, args, ctx.signal)
  } catch (err) {
    throw asNocturn(err, log)
  }
  return readToolReply(reply, log)
}

function asNocturn(err: unknown, log: Logger): NocturnError {
  if (err instanceof NocturnError) return err
  if (err instanceof ServerFault) {
    log.warn({ event: `home_${err.kind}`, err: errorText(err) }, 'home call failed')
    return homeFaultError(err)
  }
  log.warn({ event: 'home_call_failed', err: errorText(err) }, 'home call failed')
  return new NocturnError('NOC_ERR_HOME_FAILED', 'Home Assistant failed, so I did nothing.')
}

/**
 * HA's preferred area, done by the speaker (the MCP context carries no device): a call that names
 * no area or floor is narrowed to the speaker's area when something there matches — "turn off
 * the lights" means this room's — and left whole when nothing there does ("unlock everything").
 */
function preferSpeakerArea(
  home: HomeSnapshot,
  slots: TargetSlots,
  area: string | undefined,
): TargetSlots {
  if (!area || slots.area !== undefined || slots.floor !== undefined) return slots
  const here = { ...slots, area }
  const narrowed = resolveTargets(home, here)
  if (narrowed.kind !== 'matched') return slots
  if (slots.name === undefined) return here
  const whole = resolveTargets(home, slots)
  return whole.kind === 'ambiguous' ? here : slots
}

function verbOf(intent: HomeIntent): string {
  const verbs: Partial<Record<HomeIntent, string>> = {
    turn_on: 'Turn on',
    turn_off: 'Turn off',
    lock: 'Lock',
    unlock: 'Unlock',
    open: 'Open',
    close: 'Close',
    set_position: 'Set the position of',
    script: 'Run',
  }
  return verbs[intent] ?? 'Change'
}

function describeSlots(s: TargetSlots): string {
  const parts = [
    s.name && `"${s.name}"`,
    s.deviceClass?.length && s.deviceClass.join('/'),
    s.domain?.length && `every ${s.domain.join('/')}`,
    s.area && `in ${s.area}`,
    s.floor && `on ${s.floor}`,
  ].filter(Boolean)
  return parts.join(' ') || 'something'
}

function summarise(args: Record<string, unknown>): string {
  let text: string
  try {
    text = JSON.stringify(args)
  } catch {
    text = '?'
  }
  return text.length > 200 ? `${text.slice(0, 199)}…` : text
}
