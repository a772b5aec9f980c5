import { NocturnError } from '../core/errors.js'

/**
 * The next instant a wall-clock time ("07:30") occurs in a time zone, after `now` — for alarms,
 * which are set in local time and must stay right across daylight-saving changes.
 */
export function nextLocalTime(now: number, hhmm: string, timeZone: string): number {
  const m = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(hhmm)
  if (!m)
    throw new NocturnError(
      'NOC_ERR_INVALID_ARGS',
      `not a time of day: ${hhmm} (expected HH:MM, 24-hour)`,
    )
  const hour = Number(m[1])
  const minute = Number(m[2])
  const today = partsIn(now, timeZone)
  for (let day = 0; day < 3; day++) {
    const at = zonedToUtc(today.year, today.month, today.day + day, hour, minute, timeZone)
    if (at > now) return at
  }
  throw new NocturnError('NOC_ERR_INVALID_ARGS', `cannot place ${hhmm} in ${timeZone}`)
}

/** The UTC instant of a wall-clock time in `timeZone` (two passes settle a DST offset). */
function zonedToUtc(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  timeZone: string,
): number {
  const wall = Date.UTC(y, mo - 1, d, h, mi)
  let guess = wall - offsetAt(wall, timeZone)
  guess = wall - offsetAt(guess, timeZone)
  return guess
}

function offsetAt(instant: number, timeZone: string): number {
  const p = partsIn(instant, timeZone)
  return (
    Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) -
    Math.floor(instant / 1000) * 1000
  )
}

function partsIn(instant: number, timeZone: string) {
  const fmt = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  })
  const get = (type: string) =>
    Number(fmt.formatToParts(new Date(instant)).find((p) => p.type === type)?.value ?? 0)
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
    second: get('second'),
  }
}

/** "07:30" in the zone, for what the model says back. */
export function formatLocal(instant: number, timeZone: string): string {
  return new Date(instant).toLocaleString('en-GB', {
    timeZone,
    weekday: 'long',
    hour: '2-digit',
    minute: '2-digit',
  })
}
