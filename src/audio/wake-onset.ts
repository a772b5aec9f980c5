import { DEFAULT_WAKE_BACKLOG_MS } from '../core/defaults.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Clock } from '../ports/clock.js'
import { LIVE_INPUT_RATE_HZ } from '../ports/live-llm.js'
import type { Onset, OnsetSource } from '../ports/onset.js'
import type { WakeArbiter } from '../ports/wake-arbiter.js'
import type { WakeDetection, WakeWordDetector } from '../ports/wake-word.js'
import { bytesForMs } from './pcm.js'
import { PreRollRing } from './pre-roll.js'
import type { VoicedHistory } from './voiced-history.js'

export interface WakeOnsetOptions {
  /** Hears every room frame; its detections come back through `detected`. */
  readonly detector: WakeWordDetector
  /** The speech detector that must agree: a wake with no voice around it is not one. */
  readonly voiced: VoicedHistory
  readonly clock: Clock
  readonly logger: Logger
  /** Several speakers in one home: only the one that wins the claim opens a session. */
  readonly arbiter?: WakeArbiter
  /**
   * True while this speaker is in a session that is not ending: a wake then is a barge-in on it,
   * taken at once (the person is talking to this speaker; there is nothing to arbitrate), and the
   * others are told. A session closing takes no wake, so that one is claimed like any other.
   */
  readonly answering?: () => boolean
  readonly sampleRateHz?: number
  /** Audio before the wake sent first: the phrase (for the second opinion) and the command's start. */
  readonly preRollMs?: number
  /** How much speech the speech detector must have heard in the `agreeWindowMs` before the wake. */
  readonly minVoicedMs?: number
  readonly agreeWindowMs?: number
  /** After a wake that passed the checks, further detections are ignored this long. */
  readonly refractoryMs?: number
  /**
   * True while the speaker is playing or its echo is still in the room (the echo gate is shut).
   * A wake then must be louder than the speaker's own echo, or it is the speaker waking itself.
   */
  readonly speakerAudible?: () => boolean
  /** How much louder (dB) than the echo before it the phrase must be while the speaker plays. */
  readonly overEchoDb?: number
}

/**
 * The reference's figures (wake-word.md §4): the detector fires 20–510 ms after the phrase ends
 * and a phrase lasts about 0.8 s, so 2 s before the detection hold all of "hey jarvis" (the model's
 * second opinion needs to hear it) and the start of a command said in the same breath.
 */
export const DEFAULT_WAKE_PRE_ROLL_MS = 2000
const DEFAULT_MIN_VOICED_MS = 200
const DEFAULT_AGREE_WINDOW_MS = 1500
const DEFAULT_REFRACTORY_MS = 2000
/** A person talking over the reply adds their voice to its echo; the echo alone stays level. */
const DEFAULT_OVER_ECHO_DB = 6
/** The phrase's own window (the detector's 16 chunks of 80 ms), and the echo measured before it. */
const PHRASE_MS = 1300
const ECHO_BEFORE_MS = 3000
/** Half a second of echo frames (20 ms each) makes a baseline. */
const ECHO_BASELINE_FRAMES = 25

/**
 * `wake` mode: the listening chain's wake stage. Every frame the room makes (the MicGate's raw
 * tap, so the speaker being talked over is heard too) goes into the pre-roll ring, the speech
 * detector and the wake detector; a detection becomes an onset only when the speech detector
 * agrees, the refractory time has passed and, with several speakers, this one won the claim.
 * It keeps listening during a session: a wake then is the session loop's barge-in, told at once
 * (nothing to arbitrate: the person is talking to this speaker), the claim only after it.
 */
export class WakeOnset implements OnsetSource {
  readonly #o: WakeOnsetOptions
  readonly #log: Logger
  readonly #ring: PreRollRing
  #listener: ((onset: Onset) => void) | undefined
  #quietUntil = Number.NEGATIVE_INFINITY
  #claiming = false
  /** Counts `rearm()`s: a claim that resolves after one (a mute, a session's end) is not taken. */
  #armed = 0
  #closed = false
  readonly #abort = new AbortController()
  /** The capture time of the newest room frame: how late a detection is told. */
  #lastAt = Number.NEGATIVE_INFINITY

  constructor(options: WakeOnsetOptions) {
    this.#o = options
    this.#log = options.logger
    const rate = options.sampleRateHz ?? LIVE_INPUT_RATE_HZ
    const preRollMs = options.preRollMs ?? DEFAULT_WAKE_PRE_ROLL_MS
    // A board that falls behind scores a chunk up to the detector's backlog after it was heard; the
    // pre-roll then reaches back from the phrase, not from the moment it was scored, so the model
    // (and its second opinion) still hears "hey jarvis" and the command after it.
    this.#ring = new PreRollRing(bytesForMs(rate, preRollMs + DEFAULT_WAKE_BACKLOG_MS))
  }

  /** What the detector listens for. */
  get phrases(): readonly string[] {
    return this.#o.detector.phrases
  }

  /** One room frame (lent), from the MicGate's tap: after mute, before the echo gate. */
  room(frame: Uint8Array, capturedAtMs: number): void {
    // No wake may be made of sound from both sides of a gap (a mute): the detector starts afresh.
    if (this.#ring.push(frame, capturedAtMs)) this.#o.detector.reset()
    this.#lastAt = capturedAtMs
    const voiced = this.#o.voiced
    voiced.push(frame, capturedAtMs, this.#o.speakerAudible?.() === true)
    // A wake must have a voice in its agree window; with none, the detector may spare the work.
    const window = this.#o.agreeWindowMs ?? DEFAULT_AGREE_WINDOW_MS
    this.#o.detector.push(frame, capturedAtMs, voiced.voicedSince(capturedAtMs - window))
  }

  /** The detector's listener. */
  readonly detected = (d: WakeDetection): void => {
    if (this.#closed) return
    const now = this.#o.clock.now()
    if (now < this.#quietUntil || this.#claiming) {
      this.#log.debug({ score: d.score }, 'wake ignored: refractory')
      return
    }
    const lateMs = this.#lastAt - d.heardAtMs
    // Later than the backlog (only while the detector starts, behind by seconds): the person has
    // moved on; no chime, and nothing of it leaves the room.
    if (lateMs > DEFAULT_WAKE_BACKLOG_MS) {
      this.#log.info(
        { event: 'wake_rejected', why: 'late', score: d.score, lateMs },
        'wake rejected: scored too long after it was said (the detector is behind)',
      )
      return
    }
    const window = this.#o.agreeWindowMs ?? DEFAULT_AGREE_WINDOW_MS
    const voicedMs = this.#o.voiced.voicedMs(d.heardAtMs - window, d.heardAtMs)
    if (voicedMs < (this.#o.minVoicedMs ?? DEFAULT_MIN_VOICED_MS)) {
      this.#log.info(
        { event: 'wake_rejected', why: 'no speech', score: d.score, voicedMs },
        'wake rejected: the speech detector heard no voice',
      )
      return
    }
    const selfWake = this.#overEcho(d)
    if (selfWake) {
      this.#log.info(
        { event: 'wake_rejected', why: 'own voice', score: d.score, ...selfWake },
        selfWake.echoDb === undefined
          ? 'wake rejected: the speaker has only just begun, its own voice cannot be told apart'
          : 'wake rejected: no louder than the speaker’s own echo',
      )
      return
    }
    // From a wake that stands: a rejected one must not deafen the stage to the real phrase after it.
    this.#quietUntil = now + (this.#o.refractoryMs ?? DEFAULT_REFRACTORY_MS)
    const arbiter = this.#o.arbiter
    if (!arbiter || this.#o.answering?.() === true) {
      // A barge-in drops the reply now, in this call; the claim (the others yield) goes after it.
      this.#take(d)
      arbiter?.answering(d)
      return
    }
    this.#claiming = true
    const armed = this.#armed
    void arbiter
      .claim(d, this.#abort.signal)
      .catch((err: unknown) => {
        // The port never throws; if an adapter does, this speaker answers by itself.
        this.#log.warn({ event: 'wake_claim_failed', err: errorText(err) }, 'wake claim failed')
        return true
      })
      .then((won) => {
        this.#claiming = false
        if (this.#closed) return
        if (armed !== this.#armed) {
          this.#log.info(
            { score: d.score },
            'wake dropped: muted, or a session ended, while claimed',
          )
        } else if (won) this.#take(d)
        else this.#log.info({ score: d.score }, 'another speaker answers this wake')
      })
  }

  listen(listener: (onset: Onset) => void): void {
    this.#listener = listener
  }

  /** A session closed or the mute pressed: what it heard is not pre-roll for the next one. */
  rearm(): void {
    this.#armed++
    this.#ring.clear()
    this.#o.detector.reset()
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#abort.abort()
    this.#o.voiced.close()
    await this.#o.detector.close()
  }

  /**
   * While the speaker plays (without echo cancellation the microphone hears it), the phrase's
   * window must be louder than the echo heard in the seconds before it. Returns the levels when
   * it is not (a self-wake), undefined when the wake stands: no echo in the phrase's window.
   * With echo in it but not yet half a second of echo before it (a reply, an announcement, in its
   * first ~1.8 s), there is nothing to weigh the phrase against and the speaker's own voice may be
   * all the detector heard: the wake is refused (`echoDb` absent). The button still stops it.
   */
  #overEcho(d: WakeDetection): { phraseDb: number; echoDb?: number } | undefined {
    const v = this.#o.voiced
    const from = d.heardAtMs - PHRASE_MS
    if (v.levelDb(from, d.heardAtMs, true, 1) === undefined) return undefined
    const phraseDb = v.levelDb(from, d.heardAtMs)
    if (phraseDb === undefined) return undefined
    const phrase = Math.round(phraseDb * 10) / 10
    const echoDb = v.levelDb(from - ECHO_BEFORE_MS, from - 1, true, ECHO_BASELINE_FRAMES)
    if (echoDb === undefined) return { phraseDb: phrase }
    const margin = this.#o.overEchoDb ?? DEFAULT_OVER_ECHO_DB
    if (phraseDb >= echoDb + margin) return undefined
    return { phraseDb: phrase, echoDb: Math.round(echoDb * 10) / 10 }
  }

  #take(d: WakeDetection): void {
    // Taken now, after the claim: the ring kept recording meanwhile, up to this frame. It reaches
    // back as far before the phrase as it would have had the wake been scored at once.
    const lateMs = Math.max(0, this.#lastAt - d.heardAtMs)
    // lateMs: the audio heard since the phrase's chunk (scoring behind, a claim's wait), in the log
    // so a household's late chimes can be told from a slow model.
    this.#log.info(
      { phrase: d.phrase, score: d.score, levelDb: d.levelDb, lateMs },
      'wake phrase heard',
    )
    const rate = this.#o.sampleRateHz ?? LIVE_INPUT_RATE_HZ
    const preRollMs = this.#o.preRollMs ?? DEFAULT_WAKE_PRE_ROLL_MS
    const preRoll = this.#ring.snapshot(bytesForMs(rate, preRollMs + lateMs))
    this.#listener?.({ cause: 'wake', preRoll, atMs: d.heardAtMs, wake: d })
  }
}
