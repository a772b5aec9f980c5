import type { LedState } from '../ports/panel.js'

/** One step of a pattern: the LED is `on` (or off) for `ms`. */
export interface LedStep {
  readonly on: boolean
  readonly ms: number
}

/** `count` flashes of `ms` on, each followed by as long off, the last by `restMs` off instead. */
function flashes(count: number, ms: number, restMs: number): LedStep[] {
  return Array.from({ length: count }, (_, i) => [
    { on: true, ms },
    { on: false, ms: i === count - 1 ? restMs : ms },
  ]).flat()
}

/**
 * One pattern per state, told apart on a single one-colour LED by rhythm (docs/design.md §6):
 * steady light, darkness, a slow even blink, a double blink, a rare blip and a fast flicker are
 * distinct even in peripheral vision. A pattern with one step is steady; longer ones repeat.
 */
export const LED_PATTERNS: Readonly<Record<LedState, readonly LedStep[]>> = {
  // Idle most of the day: dark, so the speaker does not light up a bedroom.
  idle: [{ on: false, ms: 0 }],
  // The microphone is streaming: steady light, the one state a person must never miss.
  listening: [{ on: true, ms: 0 }],
  // Talking: a slow, even breath.
  speaking: flashes(1, 600, 600),
  // Waiting for a phone's yes: a double blink, like a knock.
  waiting_for_approval: flashes(2, 150, 1050),
  // Muted: a short blip every two seconds — alive, but deaf.
  muted: flashes(1, 100, 1900),
  // A timer or alarm is ringing: a triple flash, like the chime's rhythm; a press stops it.
  ringing: flashes(3, 120, 600),
  // Something is broken (broker, provider, a GPIO child): a fast flicker that asks for attention.
  error: flashes(1, 100, 100),
}
