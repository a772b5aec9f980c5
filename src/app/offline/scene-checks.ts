import type { FakeLiveServer } from '../../testing/fake-live-server/index.js'
import type { SessionSummary } from '../../voice/session-types.js'
import type { Seen } from './run-context.js'

/** The typed reply, from the history the text model is sent and what the house saw, never canned. */
export function typedReply(body: Record<string, unknown>, seen: Seen): string {
  const history = JSON.stringify(body.contents ?? [])
  const answered = (name: string) =>
    new RegExp(`"functionResponse":\\{[^}]*"name":"${name}","response":\\{"output"`).test(history)
  const door =
    answered('unlock_front_door') && seen.doorUnlocked
      ? seen.approvedOnPhone
        ? 'Anna approved the front door on her phone'
        : 'the front door was unlocked'
      : 'the front door was not unlocked'
  const garage = seen.garageMoved ? 'the garage door was opened' : 'the garage stayed shut'
  return `You are welcome. ${door}; ${garage}.`
}

/** Where what happened differs from the household scene's script; empty when it played as written. */
export function differences(
  seen: Seen,
  summary: SessionSummary,
  server: FakeLiveServer,
  chat: readonly { role: string; text?: string }[],
  heardMs: number,
  /** Wake mode: a piece of what the room said before the wake phrase, which must not have left. */
  beforeWake?: Uint8Array,
): string[] {
  const wrong: string[] = []
  if (beforeWake) {
    if (server.connections.length !== 1)
      wrong.push(`${server.connections.length} sessions opened, not 1 (on the wake phrase)`)
    const heard = server.connections[0]?.heardAudio()
    if (heard && heard.indexOf(Buffer.from(beforeWake)) >= 0)
      wrong.push('the sentence without the wake phrase reached the model')
  }
  if (!server.connections[0]?.finished)
    wrong.push('the model side did not reach the end of its scene')
  for (const e of server.errors) wrong.push(`the model side: ${e}`)
  if (summary.reason !== 'stopped') wrong.push(`the session ended by itself (${summary.reason})`)
  if (summary.calls.answered !== 1) wrong.push(`${summary.calls.answered} calls answered, not 1`)
  if (summary.calls.withdrawn !== 1) wrong.push(`${summary.calls.withdrawn} calls withdrawn, not 1`)
  if (!seen.approvedOnPhone) wrong.push("Anna's phone never saw the unlock approved")
  if (!seen.doorUnlocked) wrong.push('the front door was never told to unlock')
  if (seen.garageMoved) wrong.push('the garage was told to open')
  if (seen.drops === 0) wrong.push('the barge-in never dropped the speaker')
  if (!seen.mutePressed || !seen.unmutePressed)
    wrong.push('the mute button was not pressed and released')
  if (!seen.streamEnd) wrong.push('the model side never heard the microphone end its stream')
  if (heardMs <= 0) wrong.push('the speaker played nothing')
  const last = chat.at(-1)
  if (last?.role !== 'assistant' || !last.text) wrong.push('the typed question got no stored reply')
  return wrong
}
