/** Persona: who the speaker is — one object the typed and the spoken ports both read. */
export interface Persona {
  /** The system instruction. */
  readonly instruction: string
  /** The provider's voice name, e.g. "Kore". */
  readonly voice: string
  /** BCP-47 language tag, e.g. "en-GB". */
  readonly language: string
}

export const defaultPersona: Persona = Object.freeze({
  instruction:
    'You are Nocturn, the voice of a smart speaker in a family home. Answer briefly and plainly. ' +
    'Some actions need a yes from a phone: when a tool reports it is waiting for approval, say so ' +
    'and keep talking; never claim an action happened until its result says it did.',
  voice: 'Kore',
  language: 'en-GB',
})
