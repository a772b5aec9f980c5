import { NocturnError } from '../core/errors.js'
import { tellEach } from '../core/listeners.js'
import type { Logger } from '../core/logger.js'
import type { Clock } from '../ports/clock.js'
import type { Onset } from '../ports/onset.js'
import type { TranscriptStore } from '../ports/transcript-store.js'
import type { WakeEntry, WakeLogBounds, WakeLogStore, WakeMark } from '../ports/wake-log.js'
import type { TeachOutcome, WakeTeacher } from '../ports/wake-teacher.js'
import type { WakeDetection } from '../ports/wake-word.js'
import type { SessionSummary } from '../voice/session-types.js'

/**
 * How much is kept: the newest 100 wakes, none older than 14 days. 100 is a week of a
 * television evening at today's false-wake rates; each keeps 8 windows of the head's input
 * (8 × 1536 floats, 49 kB), so the log stays under 5 MB.
 */
const WAKE_LOG_BOUNDS: WakeLogBounds = { count: 100, maxAgeMs: 14 * 24 * 3600_000 }
/** The words of what was said a wake keeps: enough to recognise it, not a transcript. */
const SAID_WORDS = 8
/** A wake's features are the head's best windows from this long before it was told … */
const BEFORE_MS = 1000
/** … to this long after: a phrase stays above the threshold for up to a second after it fires. */
const AFTER_MS = 1200
/** Detections remembered until their session opens (the claim, the checks come between). */
const PENDING = 8

export interface WakeLogOptions {
  readonly store: WakeLogStore
  /** Where a confirmed session's first words are read from. */
  readonly transcripts: Pick<TranscriptStore, 'messages'>
  readonly clock: Clock
  readonly logger: Logger
  /** The second opinion is asked of every wake (listen.confirm, or the local check). */
  readonly confirmAsked: boolean
  readonly bounds?: WakeLogBounds
}

/**
 * The speaker's recent wakes, for the household to teach it (docs/wake-word.md, "Teaching it"):
 * each wake that opened a session or talked over a reply, how sure the detector was, whether the
 * model confirmed it and the first words it heard, and the head's input windows around it. A
 * phone marks one "that wasn't me" (its windows become negatives for the household verifier,
 * which re-trains on the device), or notes "it missed me just now" (the best-scoring windows of
 * the last ten seconds become a positive). Nothing of it leaves the device but the list itself,
 * to a paired phone, signed.
 */
export class WakeLog {
  readonly #o: WakeLogOptions
  readonly #bounds: WakeLogBounds
  #teacher: WakeTeacher | undefined
  /** When each detection was told (clock time), by phrase and capture time. */
  readonly #pending = new Map<string, number>()
  /** The wake whose session runs now, if one does. */
  #open: number | undefined
  /** The last wake that opened a session: the local check's verdict may come after its end. */
  #checking: number | undefined
  /** Told of each "it missed me" note (the local check's trust hears it). */
  readonly #missedListeners = new Set<() => void>()
  /** One lesson at a time: marks made while one trains wait for it. */
  #teaching: Promise<unknown> = Promise.resolve()

  constructor(o: WakeLogOptions) {
    this.#o = o
    this.#bounds = o.bounds ?? WAKE_LOG_BOUNDS
  }

  /** The detector's verifiers, once it is loaded (none: wakes are logged without features). */
  useTeacher(teacher: WakeTeacher): void {
    this.#teacher = teacher
  }

  /** As the detector tells a wake: when, for the windows around it. */
  detected(d: WakeDetection): void {
    this.#pending.set(keyOf(d), this.#o.clock.now())
    while (this.#pending.size > PENDING) {
      const oldest = this.#pending.keys().next().value
      if (oldest === undefined) break
      this.#pending.delete(oldest)
    }
  }

  /** A wake opened a session, or talked over the one running (`bargeIn`). */
  heard(onset: Onset, bargeIn: boolean): void {
    const d = onset.wake
    if (onset.cause !== 'wake' || !d) return
    const toldAt = this.#pending.get(keyOf(d)) ?? this.#o.clock.now()
    this.#pending.delete(keyOf(d))
    try {
      const entry = this.#o.store.addWake(
        {
          kind: 'wake',
          at: this.#o.clock.now(),
          phrase: d.phrase,
          score: d.score,
          // A barge-in is judged by nobody: the session it talks over was already confirmed.
          confirmed: this.#o.confirmAsked && !bargeIn ? 'pending' : 'not_asked',
          windows: [],
        },
        this.#bounds,
      )
      if (!bargeIn) {
        this.#open = entry.id
        this.#checking = entry.id
      }
      this.#keepFeatures(entry.id, d.phrase, toldAt)
    } catch (err) {
      this.#failed('wake_log_failed', err)
    }
  }

  /** Once the phrase has been scored past its end: its windows, before and after the wake. */
  #keepFeatures(id: number, phrase: string, toldAt: number): void {
    const teacher = this.#teacher
    if (!teacher) return
    this.#o.clock.setTimeout(() => {
      try {
        const windows = teacher.windowsAround(phrase, toldAt - BEFORE_MS, toldAt + AFTER_MS)
        this.#o.store.keepFeatures(id, windows)
      } catch (err) {
        this.#failed('wake_log_failed', err)
      }
    }, AFTER_MS + 100)
  }

  /** The session a wake opened ended: the second opinion's verdict and the first words heard. */
  ended(summary: SessionSummary): void {
    const id = this.#open
    this.#open = undefined
    if (id === undefined || !this.#o.confirmAsked) return
    try {
      const said = summary.unconfirmed ? undefined : this.#firstWords(summary.conversationId)
      this.#o.store.settleWake(id, summary.unconfirmed ? 'no' : 'yes', said)
    } catch (err) {
      this.#failed('wake_log_failed', err)
    }
  }

  /** The local check's verdict on the phrase of the wake that opened the last session. */
  checkedLocally(agreed: boolean): void {
    const id = this.#checking
    this.#checking = undefined
    if (id === undefined) return
    try {
      this.#o.store.checkedLocally(id, agreed ? 'agreed' : 'refused')
    } catch (err) {
      this.#failed('wake_log_failed', err)
    }
  }

  /** Told of each "it missed me just now" from a phone. */
  onMissed(listener: () => void): void {
    this.#missedListeners.add(listener)
  }

  list(page: { limit: number; before?: number }): WakeEntry[] {
    return this.#o.store.wakes(page)
  }

  /**
   * A phone's mark: kept, then every wake marked so far re-trains the phrase's verifier. Resolves
   * with the entry as marked and what the re-training did.
   */
  async mark(
    id: number,
    mark: WakeMark,
    phone: string,
  ): Promise<{ wake: WakeEntry; outcome: TeachOutcome }> {
    const before = this.#o.store.wake(id)
    if (before?.kind !== 'wake') {
      throw new NocturnError('NOC_ERR_NOT_FOUND', `wake: no wake ${id} is kept on this speaker`)
    }
    const wake = this.#o.store.markWake(id, mark, phone, this.#o.clock.now()) ?? before
    this.#o.logger.info({ wake: id, phrase: wake.phrase, phone, mark }, 'wake marked from phone')
    if (wake.windows === 0) {
      return {
        wake,
        outcome: {
          learnt: false,
          why: 'no features were kept of this wake to learn from (a phrase keeps them once it has a household verifier: nocturn wake enroll)',
        },
      }
    }
    return { wake, outcome: await this.#teach(wake.phrase) }
  }

  /** "It missed me just now": the best-scoring windows of the last seconds, kept as a positive. */
  async missed(phone: string): Promise<{ wake: WakeEntry; outcome: TeachOutcome }> {
    tellEach(this.#missedListeners, (l) => l(), this.#o.logger, {
      event: 'wake_missed_listener_failed',
    })
    const best = this.#teacher?.bestRecent()
    const at = this.#o.clock.now()
    const entry = this.#o.store.addWake(
      {
        kind: 'missed',
        at,
        phrase: best?.phrase ?? '',
        score: best?.score ?? 0,
        confirmed: 'not_asked',
        windows: best?.windows ?? [],
      },
      this.#bounds,
    )
    const noted = entry
    this.#o.logger.info({ wake: entry.id, phone, score: best?.score }, 'missed wake noted')
    if (!best) {
      return {
        wake: noted,
        outcome: { learnt: false, why: 'nothing near a wake phrase was heard in the last seconds' },
      }
    }
    // A note of a miss teaches only alongside marks: it is a positive, and so are confirmed wakes.
    return { wake: noted, outcome: await this.#teach(best.phrase) }
  }

  #teach(phrase: string): Promise<TeachOutcome> {
    const teacher = this.#teacher
    if (!teacher) {
      return Promise.resolve({ learnt: false, why: 'this speaker has no wake word to teach' })
    }
    const run = this.#teaching.then(async () => {
      const outcome = await teacher.teach(phrase, this.#o.store.lesson(phrase))
      this.#o.logger.info({ phrase, ...outcome }, 'wake verifier taught')
      return outcome
    })
    this.#teaching = run.catch(() => {})
    return run
  }

  #firstWords(conversationId: string): string | undefined {
    const first = this.#o.transcripts
      .messages(conversationId, { limit: 20 })
      .find((m) => m.role === 'user')
    if (first?.role !== 'user') return undefined
    const words = first.text.trim().split(/\s+/)
    return words.slice(0, SAID_WORDS).join(' ') + (words.length > SAID_WORDS ? '…' : '')
  }

  #failed(event: string, err: unknown): void {
    this.#o.logger.warn({ event, err: String(err) }, 'the wake log could not be written')
  }
}

function keyOf(d: WakeDetection): string {
  return `${d.phrase}@${d.heardAtMs}`
}
