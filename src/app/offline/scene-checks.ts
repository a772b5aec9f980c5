import type { SessionSummary } from '../../voice/session-types.js'
import type { ModelSide } from './model-side.js'
import type { Seen } from './run-context.js'

/** Where what happened differs from the household scene's script; empty when it played as written. */
export function differences(
  seen: Seen,
  summary: SessionSummary,
  model: ModelSide,
  chat: readonly { role: string; text?: string }[],
  heardMs: number,
  /** Wake mode: a piece of what the room said before the wake phrase, which must not have left. */
  beforeWake?: Uint8Array,
): string[] {
  const wrong = model.differences(seen, beforeWake)
  if (summary.reason !== 'stopped') wrong.push(`the session ended by itself (${summary.reason})`)
  if (summary.calls.answered !== 1) wrong.push(`${summary.calls.answered} calls answered, not 1`)
  if (summary.calls.withdrawn !== 1) wrong.push(`${summary.calls.withdrawn} calls withdrawn, not 1`)
  if (!seen.approvedOnPhone) wrong.push("Anna's phone never saw the unlock approved")
  if (!seen.doorUnlocked) wrong.push('the front door was never told to unlock')
  if (seen.garageMoved) wrong.push('the garage was told to open')
  if (seen.drops === 0) wrong.push('the barge-in never dropped the speaker')
  if (!seen.mutePressed || !seen.unmutePressed)
    wrong.push('the mute button was not pressed and released')
  if (heardMs <= 0) wrong.push('the speaker played nothing')
  const last = chat.at(-1)
  if (last?.role !== 'assistant' || !last.text) wrong.push('the typed question got no stored reply')
  return wrong
}
