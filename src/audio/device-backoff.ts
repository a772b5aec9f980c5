import type { BackoffPolicy } from '../core/backoff.js'

/**
 * Restarting an audio device (a recorder or player that exited, a stream that failed): 250 ms,
 * doubling to 8 s, so an unplugged card costs a try every few seconds and not a log line each; a
 * device that then ran 10 s was healthy, and its next failure is retried quickly again.
 */
export const DEVICE_BACKOFF: BackoffPolicy = { initialMs: 250, maxMs: 8000, healthyMs: 10_000 }
