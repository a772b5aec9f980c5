import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Clock, TimerHandle } from '../ports/clock.js'
import type { TranscriptStore } from '../ports/transcript-store.js'

export interface RetentionPolicy {
  /** Conversations idle longer than this many days are removed; undefined keeps them by age. */
  readonly days?: number | undefined
  /** At most this many conversations are kept, newest first; undefined keeps them by count. */
  readonly keep?: number | undefined
  /** How often the policy is applied. */
  readonly everyMs: number
}

const DAY_MS = 86_400_000

/**
 * Applies the household's retention policy now and then on a schedule; when anything was removed
 * the file is vacuumed so deleted words do not linger on the SD card. Returns a stop function.
 */
export function startRetention(
  store: TranscriptStore,
  policy: RetentionPolicy,
  clock: Clock,
  log: Logger,
): () => void {
  let timer: TimerHandle | undefined
  let stopped = false
  const apply = () => {
    try {
      const removed = store.prune({
        before: policy.days === undefined ? undefined : clock.now() - policy.days * DAY_MS,
        keep: policy.keep,
      })
      if (removed > 0) store.vacuum()
      log.info({ removed }, 'retention applied')
    } catch (err) {
      log.error({ event: 'retention_failed', err: errorText(err) }, 'retention failed')
    }
    if (!stopped) timer = clock.setTimeout(apply, policy.everyMs)
  }
  apply()
  return () => {
    stopped = true
    if (timer) clock.clearTimeout(timer)
  }
}
