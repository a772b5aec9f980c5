import type { Sensitivity } from '../protocol/sensitivity.js'

/**
 * SpeakerSettings: the speaker's own settings a phone may change — its volume and its wake
 * sensitivity — each change said to come from the phone, as the button's and Home Assistant's are.
 */
export interface SpeakerSettings {
  readonly sensitivity: Sensitivity
  /** Sets the volume (0–100 %); returns what it is now. */
  setVolume(percent: number, source: 'phone'): number
  /** Sets the wake sensitivity; whether it changed. */
  setSensitivity(sensitivity: Sensitivity, source: 'phone'): boolean
}
