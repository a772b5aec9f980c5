/**
 * Panel: the button (press / release, debounced) and the LED that tells the room what the speaker
 * is doing.
 */
export interface Panel {
  start(onButton: (event: ButtonEvent) => void): Promise<void>
  setLed(state: LedState): void
  /** Shows a level (the volume, 0–100) for a moment, where the board has lights that can. */
  showLevel?(percent: number): void
  close(): Promise<void>
}

export type LedState =
  | 'idle'
  | 'listening'
  | 'speaking'
  | 'waiting_for_approval'
  | 'muted'
  | 'error'
  /** A timer or alarm is ringing: a press stops it. */
  | 'ringing'

export interface ButtonEvent {
  readonly kind: 'press' | 'release'
  readonly atMs: number
}
