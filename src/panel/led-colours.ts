import type { LedState } from '../ports/panel.js'
import type { Rgb } from '../ports/rgb-leds.js'

/**
 * Each state's colour on colour LEDs, shown in the same rhythm as on a one-colour LED
 * (led-patterns.ts), so a household that learned one board reads the other: blue while the
 * microphone streams, green while speaking, amber while a phone is deciding, red when muted,
 * magenta flicker when something is broken, white flashes while a timer rings. Idle stays dark.
 */
export const LED_COLOURS: Readonly<Record<LedState, Rgb>> = {
  idle: { r: 0, g: 0, b: 0 },
  listening: { r: 0, g: 60, b: 255 },
  speaking: { r: 0, g: 255, b: 60 },
  waiting_for_approval: { r: 255, g: 110, b: 0 },
  muted: { r: 255, g: 0, b: 0 },
  error: { r: 255, g: 0, b: 160 },
  ringing: { r: 255, g: 255, b: 255 },
}
