import type { LedState } from '../ports/panel.js'

export interface VoiceStateInputs {
  readonly sessionOpen: boolean
  readonly muted: boolean
  readonly error: boolean
  readonly speaking: boolean
  readonly waitingForApproval: boolean
}

/**
 * What the LED and the status topic show, from what the driver knows. Muted wins over every other
 * state (docs/architecture.md, the panel): a muted device must never look like it is listening.
 */
export function voiceState(i: VoiceStateInputs): LedState {
  if (i.muted) return 'muted'
  if (i.error) return 'error'
  if (!i.sessionOpen) return 'idle'
  if (i.speaking) return 'speaking'
  if (i.waitingForApproval) return 'waiting_for_approval'
  return 'listening'
}
