import type { SessionSummary } from '../../voice/session-types.js'
import { DOOR_CARD, type House } from './house.js'
import type { Seen } from './run-context.js'

/** What Home Assistant must have run, in order, and nothing else: the door after the yes, the light. */
const HA_CALLS = ['lock.unlock lock.front_door', 'homeassistant.turn_on light.kitchen']

/** Where what happened differs from the household scene's script; empty when it played as written. */
export function differences(
  seen: Seen,
  summary: SessionSummary,
  { model, ha }: House,
  chat: readonly { role: string; text?: string }[],
  heardMs: number,
  /** Wake mode: a piece of what the room said before the wake phrase, which must not have left. */
  beforeWake?: Uint8Array,
): string[] {
  const wrong = model.differences(seen, beforeWake)
  if (summary.reason !== 'stopped') wrong.push(`the session ended by itself (${summary.reason})`)
  if (summary.calls.answered !== 2) wrong.push(`${summary.calls.answered} calls answered, not 2`)
  if (summary.calls.withdrawn !== 1) wrong.push(`${summary.calls.withdrawn} calls withdrawn, not 1`)
  if (!seen.approvedOnPhone) wrong.push("Anna's phone never saw the unlock approved")
  if (!seen.phoneAsked.includes(DOOR_CARD)) wrong.push(`Anna's phone never showed "${DOOR_CARD}"`)
  if (!seen.doorUnlocked) wrong.push('the front door was never told to unlock')
  if (seen.doorBeforeYes) wrong.push('the front door unlocked before Anna said yes')
  if (seen.garageMoved) wrong.push('the garage was told to open')
  if (!seen.lightOn) wrong.push('the kitchen light was never switched on')
  const lightAsked = seen.phoneAsked.filter((a) => /light/i.test(a))
  if (lightAsked.length > 0) wrong.push(`a phone was asked about the light: "${lightAsked[0]}"`)
  const ran = ha.house.calls.map((c) => `${c.domain}.${c.service} ${c.entityIds.join(',')}`)
  if (ran.join('; ') !== HA_CALLS.join('; ')) {
    wrong.push(
      `Home Assistant ran [${ran.join('; ')}], not exactly [${HA_CALLS.join('; ')}] in that order`,
    )
  }
  // The model is told the lock's state as Home Assistant reported it, not HA's bare "success".
  const told = model.doorAnswer()
  if (!told?.includes('"confirmed":true') || !told.includes('Front Door is unlocked')) {
    wrong.push(
      `the model was not told the front door is confirmed unlocked (told ${told ?? 'nothing'})`,
    )
  }
  if (seen.drops === 0) wrong.push('the barge-in never dropped the speaker')
  if (!seen.mutePressed || !seen.unmutePressed)
    wrong.push('the mute button was not pressed and released')
  if (heardMs <= 0) wrong.push('the speaker played nothing')
  const last = chat.at(-1)
  if (last?.role !== 'assistant' || !last.text) wrong.push('the typed question got no stored reply')
  return wrong
}
