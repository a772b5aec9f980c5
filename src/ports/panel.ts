/**
 * Panel: the button (press / release, debounced) and the LED that tells the room what the speaker
 * is doing.
 */
export interface Panel {
  start(onButton: (event: ButtonEvent) => void): Promise<void>
  setLed(state: LedState): void
  close(): Promise<void>
}

export type LedState =
  | 'idle'
  | 'listening'
  | 'speaking'
  | 'waiting_for_approval'
  | 'muted'
  | 'error'

export interface ButtonEvent {
  readonly kind: 'press' | 'release'
  readonly atMs: number
}
