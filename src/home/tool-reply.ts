import { NocturnError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { ServerFault, ToolReply } from '../ports/tool-server.js'

/** More than this of a tool's answer is cut: the model needs the gist, not 500 entities' YAML. */
const MAX_REPLY_CHARS = 12_000

/** Printable text only, cut to `max`: what the home says may end up spoken. */
function cleanText(text: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '')
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean
}

/**
 * What one of the home's tools answered, for the model: HA's JSON (`{speech, response_type,
 * data}`) read as such, anything else passed as cut, clean text; an error answer becomes a failed
 * call with HA's reason. HA's `action_done` means only that no error came within 200 ms
 * (helpers/intent.py), so the answer says so.
 */
export function readToolReply(reply: ToolReply, log: Logger, who = 'Home Assistant'): unknown {
  const text = cleanText(reply.text ?? '', MAX_REPLY_CHARS)
  if (reply.isError) {
    log.info({ reason: text.slice(0, 200) }, 'home tool answered with an error')
    throw new NocturnError('NOC_ERR_HOME_FAILED', `${who} said: ${text.slice(0, 300)}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { result: text }
  }
  if (typeof parsed !== 'object' || parsed === null) return { result: text }
  const answer = parsed as Record<string, unknown>
  if (answer.response_type === 'error') {
    const speech = JSON.stringify(answer.speech ?? answer.data ?? '').slice(0, 300)
    throw new NocturnError('NOC_ERR_HOME_FAILED', `${who} said: ${speech}`)
  }
  if (answer.response_type === 'action_done') {
    return {
      ...answer,
      note: 'Home Assistant sent the command; its "done" only means no error came within 200 ms.',
    }
  }
  return answer
}

/** A fault as the sentence the model says. */
export function homeFaultError(fault: ServerFault, who = 'Home Assistant'): NocturnError {
  switch (fault.kind) {
    case 'unauthorized':
      return new NocturnError(
        'NOC_ERR_HOME_UNAUTHORIZED',
        `${who} refused the speaker's access token, so I did nothing. Someone needs to give the speaker a new token.`,
      )
    case 'unreachable':
      return new NocturnError(
        'NOC_ERR_HOME_UNREACHABLE',
        `I can't reach ${who} right now, so I did nothing.`,
      )
    case 'timeout':
      return new NocturnError(
        'NOC_ERR_HOME_UNREACHABLE',
        `${who} did not answer in time, so I do not know whether it was done.`,
      )
    case 'refused':
      return new NocturnError(
        'NOC_ERR_HOME_FAILED',
        `${who} refused: ${cleanText(fault.message, 300)}`,
      )
    default:
      return new NocturnError(
        'NOC_ERR_HOME_FAILED',
        `${who} gave an answer I could not read, so I did nothing.`,
      )
  }
}
