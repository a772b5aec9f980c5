import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { AudioOut } from '../ports/audio.js'
import type { Clock, TimerHandle } from '../ports/clock.js'
import type { StoredTimer, TimerKind, TimerStore } from '../ports/timer-store.js'
import { chimePcm } from './chime.js'

/** Where a ringing timer is heard: the speaker's output (only what ringing needs of AudioOut). */
export type ChimeSink = Pick<AudioOut, 'sampleRateHz' | 'write'>

export interface TimerServiceOptions {
  readonly store: TimerStore
  readonly clock: Clock
  readonly sink: ChimeSink
  readonly logger: Logger
  /** A timer found overdue at start rings if it is at most this late; older ones are "missed". */
  readonly lateGraceMs?: number
}

/** Node's timers overflow past 2^31-1 ms (about 24.8 days); longer waits are re-armed in steps. */
const MAX_WAIT_MS = 24 * 60 * 60 * 1000

/**
 * Timers and alarms that ring through the speaker: each is stored before it is armed, so after a
 * restart `start()` re-arms the pending ones — ringing at once those that came due while the power
 * was off (within the grace), and recording older ones as missed rather than ringing hours late.
 */
export class TimerService {
  readonly #options: TimerServiceOptions
  readonly #armed = new Map<string, TimerHandle>()
  readonly #listeners = new Set<(timer: StoredTimer, late: boolean) => void>()

  constructor(opts: TimerServiceOptions) {
    this.#options = opts
  }

  /** Re-arms what the store holds. Returns what was rung late and what was missed. */
  start(): { rungLate: StoredTimer[]; missed: StoredTimer[] } {
    const now = this.#options.clock.now()
    const grace = this.#options.lateGraceMs ?? 10 * 60_000
    const rungLate: StoredTimer[] = []
    const missed: StoredTimer[] = []
    for (const t of this.#options.store.pendingTimers()) {
      if (t.dueAt > now) this.#arm(t)
      else if (now - t.dueAt <= grace) {
        rungLate.push(t)
        this.#ring(t, true)
      } else {
        missed.push(t)
        this.#options.store.finishTimer(t.id, now, 'missed')
        this.#options.logger.warn(
          { event: 'timer_missed', timer: t.id, kind: t.kind, dueAt: t.dueAt },
          'timer came due while stopped; missed',
        )
      }
    }
    return { rungLate, missed }
  }

  /** Subscribes to rings (the voice driver may announce the label); returns the unsubscribe. */
  onRing(listener: (timer: StoredTimer, late: boolean) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  add(kind: TimerKind, dueAt: number, label: string | null): StoredTimer {
    const t = this.#options.store.addTimer({
      kind,
      label,
      dueAt,
      createdAt: this.#options.clock.now(),
    })
    this.#arm(t)
    this.#options.logger.info({ timer: t.id, kind, dueAt }, 'timer set')
    return t
  }

  pending(): StoredTimer[] {
    return this.#options.store.pendingTimers()
  }

  cancel(id: string): boolean {
    const h = this.#armed.get(id)
    if (h) this.#options.clock.clearTimeout(h)
    this.#armed.delete(id)
    const done = this.#options.store.finishTimer(id, this.#options.clock.now(), 'cancelled')
    if (done) this.#options.logger.info({ timer: id }, 'timer cancelled')
    return done
  }

  /** Disarms everything in memory; the store keeps them for the next start. */
  close(): void {
    for (const h of this.#armed.values()) this.#options.clock.clearTimeout(h)
    this.#armed.clear()
    this.#listeners.clear()
  }

  #arm(t: StoredTimer): void {
    const wait = t.dueAt - this.#options.clock.now()
    const h = this.#options.clock.setTimeout(
      () => {
        this.#armed.delete(t.id)
        if (this.#options.clock.now() < t.dueAt) this.#arm(t)
        else this.#ring(t, false)
      },
      Math.min(Math.max(0, wait), MAX_WAIT_MS),
    )
    this.#armed.set(t.id, h)
  }

  #ring(t: StoredTimer, late: boolean): void {
    // Record first: a crash while ringing must not ring it again forever after. A store that
    // cannot be written (disk full, read-only) does not stop the ring: the person is waiting for
    // it; it may ring once more after a restart, which is better than never.
    try {
      if (!this.#options.store.finishTimer(t.id, this.#options.clock.now(), 'rang')) return
    } catch (err) {
      this.#options.logger.error(
        { event: 'timer_end_not_recorded', timer: t.id, err: errorText(err) },
        'timer ringing, but its end could not be recorded',
      )
    }
    this.#options.logger.info(
      { event: 'timer_ringing', timer: t.id, kind: t.kind, late },
      'timer ringing',
    )
    try {
      this.#options.sink.write(chimePcm(this.#options.sink.sampleRateHz))
    } catch (err) {
      this.#options.logger.error(
        { event: 'chime_failed', timer: t.id, err: errorText(err) },
        'could not play the chime',
      )
    }
    for (const l of this.#listeners) {
      try {
        l(t, late)
      } catch (err) {
        this.#options.logger.warn(
          { event: 'timer_listener_failed', err: errorText(err) },
          'timer listener failed',
        )
      }
    }
  }
}
