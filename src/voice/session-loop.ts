import type { MicRouter } from '../audio/mic-router.js'
import type { LiveConversations } from '../conversations/live-conversations.js'
import { Backoff, type BackoffPolicy } from '../core/backoff.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Clock, TimerHandle } from '../ports/clock.js'
import type { Onset, OnsetSource } from '../ports/onset.js'
import type { SessionSummary } from './session-types.js'
import type { WakeCheck } from './wake-confirmation.js'

/** What the loop needs of the voice driver. */
interface SessionRunner {
  readonly muted: boolean
  readonly sessionRunning: boolean
  /** Told of each change of mute, from whichever source (the button, the phone, the broker). */
  onMuted(listener: (muted: boolean) => void): void
  /** Ends the running session cleanly (approvals withdrawn, transcript complete). */
  stop(): Promise<unknown>
  /**
   * The wake phrase said over a reply: the speaker falls silent now and the room is heard. False
   * when no session is live to hear what follows (it is ending, or none runs).
   */
  bargeIn(): boolean
  runSession(opts: {
    preRoll?: readonly Uint8Array[]
    confirm?: WakeCheck
    onConversation?: (id: string) => void
  }): Promise<SessionSummary>
}

export interface SessionLoopDeps {
  readonly router: MicRouter
  /** What opens a session (listen.mode): the speech detector, the wake stage or the button. */
  readonly onset: OnsetSource
  readonly driver: SessionRunner
  /**
   * The second opinion on a local wake: the session opens silent and ends without a word unless
   * the model's input transcription confirms the wake phrase. Absent: a local wake is believed.
   */
  readonly confirm?: WakeCheck
  /**
   * The room hears it was heard: told of every onset this speaker takes (and every barge-in)
   * before anything is sent anywhere — the earcon and the LED's listening state.
   */
  readonly heard?: (onset: Onset) => void
  /** A wake the second opinion did not confirm (counted in the status). */
  readonly onFalseWake?: (onset: Onset) => void
  readonly live: LiveConversations
  readonly logger: Logger
  readonly clock: Clock
  /** Told after each session, e.g. so the offline run can stop after one. */
  readonly onSessionEnd?: (summary: SessionSummary) => void
}

/** After a session that failed to run, the next onset waits 1 s, doubling to 30 s. */
const SESSION_RETRY: BackoffPolicy = { initialMs: 1000, maxMs: 30_000 }

/**
 * The appliance's outer loop: between sessions the microphone goes only to the local onset source
 * — the room is not streamed anywhere — and a session opens on its onset (the wake phrase, speech,
 * a press), with the source's pre-roll sent first so the first syllable reaches the model. A wake
 * told while a session runs is a barge-in.
 */
export class SessionLoop {
  readonly #deps: SessionLoopDeps
  #opening = false
  #stopped = false
  #current: Promise<void> = Promise.resolve()
  /** Microphone errors since frames last arrived: logged as a summary, not one line per retry. */
  #micErrors = 0
  /** Sessions in a row that failed to run; the next onset waits ever longer. */
  #failedSessions = 0
  readonly #pauses = new Backoff(SESSION_RETRY)
  #pause: TimerHandle | undefined
  #resume: (() => void) | undefined

  constructor(deps: SessionLoopDeps) {
    this.#deps = deps
  }

  async start(): Promise<void> {
    const { router, onset, logger, driver } = this.#deps
    onset.listen((o) => this.#onOnset(o))
    // Mute rules over what was heard before it: a wake still being scored, a claim on the broker
    // and the rings' last seconds are dropped at the press, not at the first frame after it.
    driver.onMuted((muted) => {
      if (muted) onset.rearm()
    })
    await router.start({
      frame: (pcm, at) => {
        if (this.#micErrors > 0) {
          logger.info({ failures: this.#micErrors }, 'microphone delivering again')
          this.#micErrors = 0
        }
        if (this.#opening || this.#stopped || this.#deps.driver.sessionRunning) return
        onset.hear?.(pcm, at)
      },
      error: (err) => {
        this.#micErrors++
        // The first failure, then every 20th: a mic left unplugged for an hour is a few lines.
        if (this.#micErrors === 1 || this.#micErrors % 20 === 0) {
          logger.error(
            { event: 'mic_failed', err: errorText(err), failures: this.#micErrors },
            'microphone failed',
          )
        }
      },
    })
    // What it listens for (the wake word, the button, speech) is on the `nocturn_running` line.
    logger.info({}, 'listening')
  }

  #onOnset(onset: Onset): void {
    const { driver, logger } = this.#deps
    if (this.#stopped) return
    if (driver.muted) {
      // Scored or claimed from audio heard before the mute, told after it.
      logger.info({ cause: onset.cause, score: onset.wake?.score }, 'heard while muted: not taken')
      return
    }
    if (this.#opening || driver.sessionRunning) {
      // Speech during a session is the session's; a wake or a press to talk interrupts the reply.
      if (onset.cause === 'speech') return
      // A session closing (or a pause after a failed one) hears nothing more: no earcon says it does.
      if (!driver.bargeIn()) {
        logger.info({ cause: onset.cause }, 'heard while a session closes: not taken')
        return
      }
      logger.info(
        { cause: onset.cause, score: onset.wake?.score },
        'talked over during a session: barge-in',
      )
      this.#deps.heard?.(onset)
      return
    }
    this.#deps.heard?.(onset)
    this.#current = this.#open(onset)
  }

  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#pause) this.#deps.clock.clearTimeout(this.#pause)
    this.#resume?.()
    // A session in progress is ended now, not waited out to its idle or budget: a service stop
    // must withdraw pending approvals and close the transcript within systemd's stop timeout.
    await this.#deps.driver.stop()
    await this.#current
    await this.#deps.router.stop()
  }

  async #open(onset: Onset): Promise<void> {
    const { driver, live, logger } = this.#deps
    this.#opening = true
    let conversationId: string | undefined
    logger.info(
      { cause: onset.cause, preRollBytes: onset.preRoll.byteLength },
      `${onset.cause === 'speech' ? 'speech detected' : onset.cause === 'wake' ? 'wake phrase heard' : 'talk pressed'}: opening a session`,
    )
    const confirm = onset.cause === 'wake' ? this.#deps.confirm : undefined
    try {
      const summary = await driver.runSession({
        preRoll: [onset.preRoll],
        ...(confirm && { confirm }),
        onConversation: (id) => {
          conversationId = id
          live.begin(id)
        },
      })
      logger.info(
        {
          event: 'session_closed',
          conversation: summary.conversationId,
          reason: summary.reason,
          turns: summary.turns,
        },
        'session closed',
      )
      if (summary.reason === 'unconfirmed') this.#deps.onFalseWake?.(onset)
      this.#deps.onSessionEnd?.(summary)
      this.#failedSessions = 0
      this.#pauses.reset()
    } catch (err) {
      this.#failedSessions++
      // A cause that lasts (the store cannot be written, the service refuses the key) would
      // otherwise fail every onset of the same sentence: the first failure and every 10th are
      // logged, and listening resumes after 1 s, doubling to 30 s, until a session runs again.
      if (this.#failedSessions === 1 || this.#failedSessions % 10 === 0) {
        logger.error(
          {
            event: 'session_failed',
            err: errorText(err),
            code: (err as { code?: unknown }).code,
            failures: this.#failedSessions,
          },
          'session failed',
        )
      }
      const pause = this.#pauses.next()
      await new Promise<void>((resolve) => {
        this.#pause = this.#deps.clock.setTimeout(resolve, pause)
        this.#resume = resolve
      })
    } finally {
      if (conversationId) live.end(conversationId)
      this.#deps.onset.rearm()
      this.#opening = false
    }
  }
}
