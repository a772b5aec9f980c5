import { readFileSync } from 'node:fs'
import type { HeardWindows, TeachOutcome, WakeTeacher } from '../../ports/wake-teacher.js'
import { fitLesson, HELD_SHARE, type Lesson } from './lesson.js'
import { type LogisticModel, predict } from './logistic.js'
import {
  decodeWindows,
  readVerifier,
  type VerifierRecord,
  type VerifierStage,
  verifierRecord,
  WakeVerifier,
  writeVerifier,
} from './verifier.js'

/** One window the head read, with its score and when it was scored (wall clock). */
interface Seen {
  readonly at: number
  readonly head: number
  readonly window: Float32Array
}

/** Windows kept per phrase: ten seconds of dense scoring (12.5 a second), a little more. */
const RING = 160
/** How long a window stays in the ring: a "missed me" note looks this far back. */
const RECENT_MS = 10_000
/** The windows a wake keeps: the head's best eight around it. */
const WAKE_WINDOWS = 8

/**
 * The household verifier of one phrase, as the detector runs it, that can be taught while it
 * runs (docs/wake-word.md, "Teaching it"). It also keeps the windows it was handed in the last
 * ten seconds, so a wake's features (the head's input, never audio) can be logged. Without an
 * enrolled verifier it scores nothing (its gate is 0 and the head's score stands): it only keeps
 * the windows, and cannot be taught.
 */
export class HouseholdStage implements VerifierStage {
  readonly phrase: string
  readonly #file: string | undefined
  readonly #headFile: string | undefined
  readonly #now: () => number
  readonly #heldShare: number
  #verifier: WakeVerifier | undefined
  #seen: Seen[] = []

  constructor(o: {
    phrase: string
    /** The enrolled verifier and its file, or neither. */
    verifier?: WakeVerifier | undefined
    file?: string | undefined
    /** The head the verifier is read behind, when a new enrolment must be read (`teach`). */
    headFile?: string | undefined
    now?: () => number
    /** The held windows' share of a lesson's loss (`HELD_SHARE`; the bench tries others). */
    heldShare?: number
  }) {
    this.phrase = o.phrase
    this.#verifier = o.verifier
    this.#file = o.file
    this.#headFile = o.headFile
    this.#now = o.now ?? Date.now
    this.#heldShare = o.heldShare ?? HELD_SHARE
  }

  get gate(): number {
    return this.#verifier?.gate ?? 0
  }

  /** The enrolled or taught verifier's model, for scoring where the models run (chain.ts). */
  get logistic(): LogisticModel | undefined {
    return this.#verifier?.logistic
  }

  /** The verifier file as it runs now (taught or as enrolled), if there is one. */
  get record(): VerifierRecord | undefined {
    return this.#verifier?.record
  }

  score(window: Float32Array, headScore: number): number {
    this.#seen.push({ at: this.#now(), head: headScore, window })
    if (this.#seen.length > RING) this.#seen = this.#seen.slice(-RING / 2)
    return this.#verifier ? this.#verifier.score(window) : headScore
  }

  /**
   * The windows scored from `fromMs` to `toMs` (wall clock) that the head scored highest, at most
   * `n`: a wake's features are the phrase's peak, before and after the chunk that decided it (a
   * verifier taught only up to that chunk would fire on the next).
   */
  around(fromMs: number, toMs: number, n = WAKE_WINDOWS): Float32Array[] {
    return this.#seen
      .filter((s) => s.at >= fromMs && s.at <= toMs)
      .sort((a, b) => b.head - a.head)
      .slice(0, n)
      .map((s) => s.window)
  }

  /** The window the head scored highest in the last `ms`, with its neighbours either side. */
  bestRecent(ms = RECENT_MS): { head: number; windows: Float32Array[] } | undefined {
    const from = this.#now() - ms
    const recent = this.#seen.filter((s) => s.at >= from)
    let best = -1
    recent.forEach((s, i) => {
      if (best < 0 || s.head > (recent[best]?.head ?? 0)) best = i
    })
    const top = recent[best]
    if (!top) return undefined
    const windows = recent.slice(Math.max(0, best - 1), best + 2).map((s) => s.window)
    return { head: top.head, windows }
  }

  /**
   * Re-trains the verifier on the household's lesson, moved from the enrolled model no further
   * than the lesson asks (an anchored fit), writes it whole over its file, and scores with it
   * from the next chunk. Slices of work hand the event loop back (`trainLogisticAsync`).
   */
  async teach(lesson: Lesson, threshold: number, at: Date): Promise<TeachOutcome> {
    if (!this.#verifier || !this.#file) {
      return {
        learnt: false,
        why: 'this phrase has no household verifier to teach: enrol first (nocturn wake enroll)',
      }
    }
    const current = this.#enrolledNow(this.#verifier, this.#file)
    if (lesson.negatives.length === 0) return { learnt: false, why: 'nothing is marked' }
    if (lesson.positives.length === 0) {
      return {
        learnt: false,
        why: 'no wake of yours the model confirmed is kept yet to learn against: say the wake phrase to it once, then mark again',
      }
    }
    const anchor: LogisticModel = {
      weights: Float64Array.from(current.record.weights),
      bias: current.record.bias,
    }
    const cpu0 = process.cpuUsage()
    // The household's phrase in noise, as enrolment heard it, unless the lesson brings its own.
    const noisy = lesson.noisy ?? decodeWindows(current.record.noisy, current.record.weights.length)
    const fitted = await fitLesson(anchor, { ...lesson, noisy }, threshold, this.#heldShare)
    if (!('model' in fitted)) return { learnt: false, why: fitted.why }
    const model = fitted.model
    const cpu = process.cpuUsage(cpu0)
    const record = verifierRecord({
      phrase: current.record.phrase,
      head: current.record.head,
      headSha256: current.record.headSha256,
      window: current.record.window,
      gate: current.record.gate,
      enrolment: current.record.enrolment,
      ...(current.record.noisy !== undefined && { noisy: current.record.noisy }),
      model,
    })
    const taught: VerifierRecord = {
      ...record,
      taught: {
        at: at.toISOString(),
        negatives: lesson.negatives.length,
        positives: lesson.positives.length,
      },
    }
    writeVerifier(this.#file, taught)
    this.#verifier = new WakeVerifier(taught)
    return {
      learnt: true,
      negatives: lesson.negatives.length,
      positives: lesson.positives.length,
      refused: lesson.negatives.filter((x) => predict(model, x) < threshold).length,
      guarded: fitted.guarded,
      cpuMs: (cpu.user + cpu.system) / 1000,
    }
  }

  /**
   * The verifier a lesson starts from. `nocturn wake enroll` may have written a new enrolment over
   * the file since this one was loaded: taught from the old one and written back, the lesson would
   * undo it. A file whose enrolment is not the running one's is read (behind its head, as at the
   * start) and runs from now; one that does not read refuses the lesson, saying why.
   */
  #enrolledNow(running: WakeVerifier, file: string): WakeVerifier {
    if (!this.#headFile) return running
    let enrolledAt: unknown
    try {
      enrolledAt = (JSON.parse(readFileSync(file, 'utf8')) as VerifierRecord).enrolment?.at
    } catch {
      return running
    }
    if (enrolledAt === running.record.enrolment.at) return running
    this.#verifier = readHouseholdVerifier(file, this.#headFile)
    return this.#verifier
  }
}

/**
 * Reads the verifier enrolled behind `headFile`, at the window it was trained on; `readVerifier`
 * checks the head's SHA-256, so a window recorded behind this head is this head's window.
 */
export function readHouseholdVerifier(file: string, headFile: string): WakeVerifier {
  let window = 16
  try {
    const w = (JSON.parse(readFileSync(file, 'utf8')) as { window?: unknown }).window
    if (typeof w === 'number') window = w
  } catch {
    // readVerifier says what is wrong with the file, with the fix.
  }
  return readVerifier(file, headFile, window)
}

/** The phrases' stages as the wake log sees them: one teacher for the detector. */
export function householdTeacher(
  stages: readonly HouseholdStage[],
  thresholdOf: (phrase: string) => number,
): WakeTeacher {
  const of = (phrase: string) => stages.find((s) => s.phrase === phrase)
  return {
    windowsAround: (phrase, fromMs, toMs) => of(phrase)?.around(fromMs, toMs) ?? [],
    bestRecent: () => {
      let best: HeardWindows | undefined
      for (const s of stages) {
        const b = s.bestRecent()
        if (b && (!best || b.head > best.score)) {
          best = { phrase: s.phrase, score: b.head, windows: b.windows }
        }
      }
      return best
    },
    teach: async (phrase, lesson) => {
      const stage = of(phrase)
      if (!stage) {
        return {
          learnt: false,
          why: `"${phrase}" has no household verifier to teach: enrol first (nocturn wake enroll)`,
        }
      }
      return stage.teach(lesson, thresholdOf(phrase), new Date())
    },
  }
}
