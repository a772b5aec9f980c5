import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { DeviceState } from '../device/device-state.js'
import type { AudioOut } from '../ports/audio.js'
import type { Clock, TimerHandle } from '../ports/clock.js'
import type { StoredTimer, TimerKind, TimerStore } from '../ports/timer-store.js'
import { chimePcm } from './chime.js'

/** Where a ringing timer is heard: the speaker's output (only what ringing needs of AudioOut). */
type ChimeSink = Pick<AudioOut, 'sampleRateHz' | 'write'>

export interface TimerServiceOptions {
  readonly store: TimerStore
  readonly clock: Clock
  readonly sink: ChimeSink
  readonly logger: Logger
  /** A timer found overdue at start rings if it is at most this late; older ones are "missed". */
  readonly lateGraceMs?: number
  /**
   * The device's state: told which timers ring and which is next; its stop (the button, a voice,
   * Home Assistant) stops the ring.
   */
  readonly device?: DeviceState
  /** A ring repeats the chime until stopped, for at most this long. */
  readonly ringForMs?: number
  /** The chime starts again this often while ringing. */
  readonly repeatMs?: number
}

/** A ring nobody stops ends by itself after a minute: the household may be out. */
export const DEFAULT_RING_MS = 60_000
/** The chime (about 1.9 s) and a pause. */
const DEFAULT_REPEAT_MS = 4000

/** Node's timers overflow past 2^31-1 ms (about 24.8 days); longer waits are re-armed in steps. */
const MAX_WAIT_MS = 24 * 60 * 60 * 1000

/**
 * Timers and alarms that ring through the speaker: each is stored before it is armed, so after a
 * restart `start()` re-arms the pending ones — ringing at once those that came due while the power
 * was off (within the grace), and recording older ones as missed rather than ringing hours late.
 * A ring repeats the chime until it is stopped (the device's stop: the button, a voice, Home
 * Assistant) or `ringForMs` has passed.
 */
export class TimerService {
  readonly #options: TimerServiceOptions
  readonly #armed = new Map<string, TimerHandle>()
  readonly #listeners = new Set<(timer: StoredTimer, late: boolean) => void>()
  /** Ringing timers: their next repeat of the chime. */
  readonly #ringing = new Map<string, TimerHandle>()
  readonly #unsubscribe: (() => void) | undefined

  constructor(opts: TimerServiceOptions) {
    this.#options = opts
    this.#unsubscribe = opts.device?.onStop(() => this.stopRinging())
  }

  /** Stops every ringing timer; returns how many were ringing. */
  stopRinging(): number {
    const n = this.#ringing.size
    for (const [id, h] of this.#ringing) {
      this.#options.clock.clearTimeout(h)
      this.#options.device?.ringing(id, false)
    }
    this.#ringing.clear()
    if (n > 0) this.#options.logger.info({ stopped: n }, 'timer ring stopped')
    return n
  }

  /** Ids of the timers ringing now. */
  ringing(): string[] {
    return [...this.#ringing.keys()]
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
    this.#next()
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
    this.#next()
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
    this.#next()
    return done
  }

  /** Disarms everything in memory; the store keeps them for the next start. */
  close(): void {
    for (const h of this.#armed.values()) this.#options.clock.clearTimeout(h)
    this.#armed.clear()
    this.stopRinging()
    this.#unsubscribe?.()
    this.#listeners.clear()
  }

  /** Tells the device which timer is due next. */
  #next(): void {
    const device = this.#options.device
    if (!device) return
    try {
      const t = this.#options.store.pendingTimers()[0]
      device.setNextTimer(t ? { id: t.id, kind: t.kind, dueAt: t.dueAt } : null)
    } catch (err) {
      this.#options.logger.warn(
        { event: 'timers_unreadable', err: errorText(err) },
        'next timer unknown',
      )
    }
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

  #chime(id: string): void {
    try {
      this.#options.sink.write(chimePcm(this.#options.sink.sampleRateHz))
    } catch (err) {
      this.#options.logger.error(
        { event: 'chime_failed', timer: id, err: errorText(err) },
        'could not play the chime',
      )
    }
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
    this.#chime(t.id)
    const until = this.#options.clock.now() + (this.#options.ringForMs ?? DEFAULT_RING_MS)
    const repeat = () => {
      if (this.#options.clock.now() >= until) {
        this.#ringing.delete(t.id)
        this.#options.device?.ringing(t.id, false)
        this.#options.logger.info({ timer: t.id }, 'timer ring ended unanswered')
        return
      }
      this.#chime(t.id)
      this.#ringing.set(t.id, this.#options.clock.setTimeout(repeat, repeatMs))
    }
    const repeatMs = this.#options.repeatMs ?? DEFAULT_REPEAT_MS
    this.#ringing.set(t.id, this.#options.clock.setTimeout(repeat, repeatMs))
    this.#options.device?.ringing(t.id, true)
    this.#next()
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
