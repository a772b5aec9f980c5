import { errorText } from './errors.js'
import type { Logger } from './logger.js'

/**
 * Tells each listener in turn. What one throws is logged under `event` (its words the message) and
 * stays with it: a failing listener never fails the caller that already acted, nor keeps the
 * listeners after it from being told.
 */
export function tellEach<L>(
  listeners: Iterable<L>,
  tell: (listener: L) => void,
  log: Logger,
  failed: { readonly event: string; readonly level?: 'warn' | 'error' },
): void {
  for (const l of listeners) {
    try {
      tell(l)
    } catch (err) {
      log[failed.level ?? 'warn'](
        { event: failed.event, err: errorText(err) },
        failed.event.replaceAll('_', ' '),
      )
    }
  }
}
