import { NocturnError } from '../core/errors.js'
import type { PhoneAsk, PhoneRequestChannel } from '../ports/phone-requests.js'
import type { WakeEntry } from '../ports/wake-log.js'
import type { TeachOutcome } from '../ports/wake-teacher.js'
import { args } from '../protocol/op-args.js'
import { isWakeMark, WAKE_MARKS, wakeOpArgSchemas } from '../protocol/wake-ops.js'
import type { WakeLog } from './wake-log.js'

const DEFAULT_LIMIT = 20
const MAX_LIMIT = 100

/**
 * The wake log over MQTT (docs/protocol.md, "Wakes"): the list, a mark and a missed-wake note,
 * each a signed request on the phones' channel, so a forged or replayed mark is refused before it
 * gets here and teaches nothing. The answer to a mark says what the speaker learnt from it.
 */
export function serveWakes(requests: PhoneRequestChannel, log: WakeLog): void {
  requests.serve({
    wakes: (ask) => {
      const a = args(wakeOpArgSchemas.wakes, ask.request.args)
      const limit = a.limit ?? DEFAULT_LIMIT
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
        throw new NocturnError(
          'NOC_ERR_BAD_REQUEST',
          `limit: expected a whole number from 1 to ${MAX_LIMIT}`,
        )
      }
      const page = log.list({
        limit: limit + 1,
        ...(a.before !== undefined && { before: a.before }),
      })
      const items = page.slice(0, limit)
      ask.items(items.map(wireWake), (w) => ({ ...w, said: undefined }))
      const oldest = items.at(-1)
      ask.reply('done', {
        count: items.length,
        ...(page.length > limit && oldest && { next: { before: oldest.id } }),
      })
    },
    mark_wake: (ask) => {
      const a = args(wakeOpArgSchemas.mark_wake, ask.request.args)
      if (!isWakeMark(a.mark)) {
        throw new NocturnError('NOC_ERR_BAD_REQUEST', `mark: expected ${WAKE_MARKS.join(' or ')}`)
      }
      answer(ask, log.mark(a.wake, a.mark, ask.request.phone))
    },
    missed_wake: (ask) => {
      args(wakeOpArgSchemas.missed_wake, ask.request.args)
      answer(ask, log.missed(ask.request.phone))
    },
  })
}

function answer(ask: PhoneAsk, done: Promise<{ wake: WakeEntry; outcome: TeachOutcome }>): void {
  done.then(
    ({ wake, outcome }) => ask.reply('done', { wake: wireWake(wake), ...outcome }),
    (err: unknown) => ask.refuse(err),
  )
}

/** A wake as a phone reads it: no features, only how many windows were kept. */
function wireWake(w: WakeEntry): Record<string, unknown> {
  const { windows, ...rest } = w
  return { ...rest, features: windows }
}
