import type { GpiodMajor } from './version.js'

export type Bias = 'pull-up' | 'pull-down' | 'disable' | 'as-is'

/** Where a line lives: 1.x tools want chip and offset (from `gpiofind`), 2.x tools take the name. */
export type LineRef = { readonly name: string } & (
  | { readonly version: 2 }
  | { readonly version: 1; readonly chip: string; readonly offset: number }
)

/**
 * `gpiomon` for one button line, printing one line per edge as "<edge> <timestamp>".
 * 1.x: `-b` makes stdout line-buffered — without it events sit in the pipe's buffer and arrive
 * seconds late; there is no debounce, so Nocturn debounces in software. 2.x: `-b` is the bias
 * instead, `-p` is kernel debounce and output is flushed per event.
 */
export function gpiomonArgs(line: LineRef, opts: { bias: Bias; debounceMs: number }): string[] {
  if (line.version === 1) {
    const bias = opts.bias === 'as-is' ? [] : [`--bias=${opts.bias}`]
    return ['-b', ...bias, '--format=%e %s.%n', line.chip, String(line.offset)]
  }
  const bias =
    opts.bias === 'as-is' ? [] : ['--bias', opts.bias === 'disable' ? 'disabled' : opts.bias]
  const debounce = opts.debounceMs > 0 ? ['--debounce-period', `${opts.debounceMs}ms`] : []
  return ['--edges', 'both', ...bias, ...debounce, '--format', '%E %S', line.name]
}

/**
 * `gpioset` holding one LED line at `value` until signalled. 1.x exits at once unless told to wait
 * (`--mode=signal`), and the line is undefined once it exits; 2.x holds the line by default.
 */
export function gpiosetArgs(line: LineRef, value: 0 | 1): string[] {
  if (line.version === 1) return ['--mode=signal', line.chip, `${line.offset}=${value}`]
  return [`${line.name}=${value}`]
}

/**
 * 2.x only: one `gpioset` that plays a whole blink pattern itself with `--toggle` (it starts at the
 * first step's level and toggles after each period, repeating), so a blinking LED costs one
 * process instead of one per level change. Needs steps that alternate on and off.
 */
export function gpiosetPatternArgs(
  line: { readonly name: string },
  steps: readonly { readonly on: boolean; readonly ms: number }[],
  activeLow: boolean,
): string[] | undefined {
  const first = steps[0]
  if (!first) return undefined
  const level = first.on !== activeLow ? 1 : 0
  if (steps.length === 1) return [`${line.name}=${level}`]
  const alternates = steps.every((s, i) => i === 0 || s.on !== steps[i - 1]?.on)
  if (!alternates || steps.length % 2 !== 0 || steps.some((s) => s.ms <= 0)) return undefined
  return ['--toggle', steps.map((s) => `${s.ms}ms`).join(','), `${line.name}=${level}`]
}

/**
 * One gpiomon output line → which way the line went and the kernel's stamp of when, in seconds
 * (`<edge> <seconds>.<nanoseconds>`, as gpiomonArgs asks); undefined for anything else (banners).
 */
export function parseEdge(
  version: GpiodMajor,
  text: string,
): { edge: 'rising' | 'falling'; stampSec: number | undefined } | undefined {
  const [first, second] = text.trim().split(/\s+/)
  const edge = edgeOf(version, first?.toLowerCase())
  if (!edge) return undefined
  return { edge, stampSec: stampOf(second) }
}

/**
 * `<seconds>.<nanoseconds>`: read the nanoseconds as a count, not a decimal fraction — 1.x's
 * `%s.%n` joins two integers, and a count printed without its leading zeros (5 µs as `5000`) read
 * as a fraction would be half a second; 2.x's `%S` pads them to nine digits, read the same.
 */
function stampOf(text: string | undefined): number | undefined {
  const m = /^(\d+)\.(\d{1,9})$/.exec(text ?? '')
  return m ? Number(m[1]) + Number(m[2]) / 1e9 : undefined
}

function edgeOf(version: GpiodMajor, token: string | undefined): 'rising' | 'falling' | undefined {
  if (!token) return undefined
  if (token === 'rising' || token === 'falling') return token
  // Numeric codes differ: 1.x prints 1 rising / 0 falling; 2.x prints 1 rising / 2 falling.
  if (token === '1') return 'rising'
  if (version === 1 && token === '0') return 'falling'
  if (version === 2 && token === '2') return 'falling'
  return undefined
}

/** `gpiofind GPIO17` → `gpiochip0 17`. */
export function parseGpiofind(text: string): { chip: string; offset: number } | undefined {
  const m = /^(\S+)\s+(\d+)\s*$/.exec(text.trim())
  return m ? { chip: m[1] as string, offset: Number(m[2]) } : undefined
}

export type { GpiodMajor }
