import { NocturnError } from '../core/errors.js'
import type { Tool } from '../core/types.js'
import type { Clock } from '../ports/clock.js'
import type { StoredTimer } from '../ports/timer-store.js'
import { formatLocal, nextLocalTime } from './local-time.js'
import type { TimerService } from './timer-service.js'

/** Harmless and reversible: allowed by voice too. Configuration may still tighten them. */
const HARMLESS = { voice: 'allow', text: 'allow' } as const

function view(t: StoredTimer, clock: Clock, timeZone: string) {
  return {
    id: t.id,
    kind: t.kind,
    label: t.label,
    rings: formatLocal(t.dueAt, timeZone),
    secondsLeft: Math.max(0, Math.round((t.dueAt - clock.now()) / 1000)),
  }
}

/** set_timer, set_alarm, list_timers, cancel_timer and stop_ringing over one TimerService. */
export function timerTools(service: TimerService, clock: Clock, timeZone?: string): Tool[] {
  // The system's zone is asked for on first use: the first Intl call loads ICU's data (tens of ms
  // and several MB), which an appliance that only listens never needs.
  let systemZone: string | undefined
  const zoneOf = (): string => {
    if (timeZone !== undefined) return timeZone
    systemZone ??= Intl.DateTimeFormat().resolvedOptions().timeZone
    return systemZone
  }
  const setTimer: Tool<{ seconds: number; label?: string }> = {
    name: 'set_timer',
    description:
      'Starts a countdown timer that rings through the speaker. Give the duration in seconds (e.g. 600 for ten minutes) and an optional label such as "pasta".',
    parameters: {
      type: 'object',
      properties: {
        seconds: {
          type: 'integer',
          minimum: 1,
          maximum: 86_400,
          description: 'Duration in seconds.',
        },
        label: { type: 'string', maxLength: 60, description: 'What the timer is for.' },
      },
      required: ['seconds'],
      additionalProperties: false,
    },
    policy: HARMLESS,
    describe: (a) =>
      `set a ${Math.round(a.seconds / 60) || 1}-minute timer${a.label ? ` for ${a.label}` : ''}`,
    async call(_ctx, a) {
      const t = service.add('timer', clock.now() + a.seconds * 1000, a.label ?? null)
      return view(t, clock, zoneOf())
    },
  }
  const setAlarm: Tool<{ time: string; label?: string }> = {
    name: 'set_alarm',
    get description() {
      return `Sets an alarm that rings through the speaker at the next occurrence of a local time (24-hour HH:MM, time zone ${zoneOf()}).`
    },
    parameters: {
      type: 'object',
      properties: {
        time: {
          type: 'string',
          pattern: '^([01]?\\d|2[0-3]):[0-5]\\d$',
          description: 'HH:MM, 24-hour.',
        },
        label: { type: 'string', maxLength: 60 },
      },
      required: ['time'],
      additionalProperties: false,
    },
    policy: HARMLESS,
    describe: (a) => `set an alarm for ${a.time}`,
    async call(_ctx, a) {
      const t = service.add('alarm', nextLocalTime(clock.now(), a.time, zoneOf()), a.label ?? null)
      return view(t, clock, zoneOf())
    },
  }
  const list: Tool<Record<string, never>> = {
    name: 'list_timers',
    description: 'Lists the timers and alarms that have not rung yet.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    policy: HARMLESS,
    describe: () => 'list the timers',
    async call() {
      return { timers: service.pending().map((t) => view(t, clock, zoneOf())) }
    },
  }
  const cancel: Tool<{ id?: string; label?: string }> = {
    name: 'cancel_timer',
    description:
      'Cancels a timer or alarm by its id or label. With neither, cancels the only one there is.',
    parameters: {
      type: 'object',
      properties: {
        id: { type: 'string', maxLength: 64 },
        label: { type: 'string', maxLength: 60 },
      },
      additionalProperties: false,
    },
    policy: HARMLESS,
    describe: (a) => `cancel the ${a.label ?? ''} timer`.replace('  ', ' '),
    async call(_ctx, a) {
      const pending = service.pending()
      const matches = pending.filter(
        (t) =>
          (a.id === undefined || t.id === a.id) &&
          (a.label === undefined || t.label?.toLowerCase() === a.label.toLowerCase()),
      )
      if (matches.length === 0)
        throw new NocturnError(
          'NOC_ERR_NOT_FOUND',
          pending.length ? 'no timer matches that' : 'there are no timers',
        )
      if (matches.length > 1 && a.id === undefined) {
        throw new NocturnError(
          'NOC_ERR_INVALID_ARGS',
          `${matches.length} timers match; say which (by label or id)`,
        )
      }
      for (const t of matches) service.cancel(t.id)
      return { cancelled: matches.map((t) => view(t, clock, zoneOf())) }
    },
  }
  const stop: Tool<Record<string, never>> = {
    name: 'stop_ringing',
    description:
      'Stops a timer or alarm that is ringing now ("stop", "that\'s enough"). Says how many were ringing.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    policy: HARMLESS,
    describe: () => 'stop the ringing timer',
    async call() {
      return { stopped: service.stopRinging() }
    },
  }
  return [setTimer as Tool, setAlarm as Tool, list as Tool, cancel as Tool, stop as Tool]
}
