import type { MicRouter } from '../audio/mic-router.js'
import type { LiveConversations } from '../conversations/live-conversations.js'
import { Backoff, type BackoffPolicy } from '../core/backoff.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Clock, TimerHandle } from '../ports/clock.js'
import type { SessionSummary } from './session-types.js'

/** What the loop needs of the local speech detector. */
export interface OnsetDetector {
  push(frame: Uint8Array, capturedAtMs: number): { preRoll: Uint8Array } | undefined
  rearm(): void
}

/** What the loop needs of the voice driver. */
export interface SessionRunner {
  readonly muted: boolean
  readonly sessionRunning: boolean
  /** Ends the running session cleanly (approvals withdrawn, transcript complete). */
  stop(): Promise<unknown>
  runSession(opts: {
    preRoll?: readonly Uint8Array[]
    onConversation?: (id: string) => void
  }): Promise<SessionSummary>
}

export interface SessionLoopDeps {
  readonly router: MicRouter
  readonly detector: OnsetDetector
  readonly driver: SessionRunner
  readonly live: LiveConversations
  readonly logger: Logger
  readonly clock: Clock
  /** Told after each session, e.g. so the offline run can stop after one. */
  readonly onSessionEnd?: (summary: SessionSummary) => void
}

/** After a session that failed to run, the next onset waits 1 s, doubling to 30 s. */
const SESSION_RETRY: BackoffPolicy = { initialMs: 1000, maxMs: 30_000 }

/**
 * The appliance's outer loop: between sessions the microphone goes only to the local speech
 * detector — the room is not streamed anywhere — and a session opens when someone starts talking,
 * with the detector's pre-roll sent first so the first syllable reaches the model.
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
    const { router, detector, logger } = this.#deps
    await router.start({
      frame: (pcm, at) => {
        if (this.#micErrors > 0) {
          logger.info({ failures: this.#micErrors }, 'microphone delivering again')
          this.#micErrors = 0
        }
        if (this.#opening || this.#stopped || this.#deps.driver.sessionRunning) return
        const onset = detector.push(pcm, at)
        if (onset) this.#current = this.#open(onset.preRoll)
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
    logger.info({}, 'listening for speech')
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

  async #open(preRoll: Uint8Array): Promise<void> {
    const { driver, detector, live, logger } = this.#deps
    this.#opening = true
    let conversationId: string | undefined
    logger.info({ preRollBytes: preRoll.byteLength }, 'speech detected: opening a session')
    try {
      const summary = await driver.runSession({
        preRoll: [preRoll],
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
      detector.rearm()
      this.#opening = false
    }
  }
}
