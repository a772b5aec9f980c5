import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Clock, TimerHandle } from '../ports/clock.js'
import type { ButtonEvent, LedState, Panel } from '../ports/panel.js'

/** What the speaker is doing, apart from mute (which is a separate switch that always wins). */
export type Activity = Exclude<LedState, 'muted'>

/** What a button gesture did: the voice driver and the status topic listen for these. */
export type PanelEvent =
  | {
      readonly kind: 'mute'
      readonly muted: boolean
      readonly source: 'button' | 'remote'
      readonly atMs: number
    }
  | { readonly kind: 'stop_speaking'; readonly atMs: number }
  /** Press to talk (`listen.mode` "button"): open a session, or talk over the one speaking. */
  | { readonly kind: 'talk'; readonly atMs: number }
  | { readonly kind: 'long_press_ignored'; readonly atMs: number }

export interface PanelControllerOptions {
  readonly panel: Panel
  readonly clock: Clock
  readonly logger: Logger
  /** Held this long, a press is a long press (stop talking) rather than a short one (mute). */
  readonly longPressMs?: number
  readonly initiallyMuted?: boolean
  /**
   * Press to talk: a short press talks and a long press toggles mute (which still wins: while
   * muted a short press does nothing, only the long press unmutes).
   */
  readonly pressToTalk?: boolean
}

export const DEFAULT_LONG_PRESS_MS = 800

/**
 * The panel's behaviour, whatever the wiring (docs/design.md §6): a short press toggles mute; a
 * press held for `longPressMs` while the speaker talks stops it without muting — recognised while
 * still held, so the speaker falls silent under the finger. With `pressToTalk` (press to talk)
 * the short press talks — opens a session, or talks over the reply — and the long press toggles
 * mute, recognised while held. The LED shows the activity, except that mute always wins.
 */
export class PanelController {
  readonly #panel: Panel
  readonly #clock: Clock
  readonly #logger: Logger
  readonly #longPressMs: number
  readonly #pressToTalk: boolean
  readonly #listeners = new Set<(event: PanelEvent) => void>()
  #muted: boolean
  #activity: Activity = 'idle'
  #pressedAt: number | undefined
  #longTimer: TimerHandle | undefined
  #longFired = false

  constructor(opts: PanelControllerOptions) {
    this.#panel = opts.panel
    this.#clock = opts.clock
    this.#logger = opts.logger
    this.#longPressMs = opts.longPressMs ?? DEFAULT_LONG_PRESS_MS
    this.#muted = opts.initiallyMuted ?? false
    this.#pressToTalk = opts.pressToTalk ?? false
  }

  get muted(): boolean {
    return this.#muted
  }

  get activity(): Activity {
    return this.#activity
  }

  /** What the LED shows now. */
  get led(): LedState {
    return this.#muted ? 'muted' : this.#activity
  }

  async start(): Promise<void> {
    this.#render()
    await this.#panel.start((event) => this.#onButton(event))
  }

  /** Subscribes to gesture results; returns the unsubscribe function. */
  on(listener: (event: PanelEvent) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  setActivity(activity: Activity): void {
    this.#activity = activity
    this.#render()
  }

  /** Mute from elsewhere (a phone, the status topic): same effect as the button, same event. */
  setMuted(muted: boolean): void {
    if (muted === this.#muted) return
    this.#setMuted(muted, 'remote', this.#clock.now())
  }

  async close(): Promise<void> {
    this.#cancelLong()
    this.#listeners.clear()
    await this.#panel.close()
  }

  #onButton(event: ButtonEvent): void {
    if (event.kind === 'press') {
      if (this.#pressedAt !== undefined) return // a second press without a release: ignore
      this.#pressedAt = event.atMs
      this.#longFired = false
      this.#longTimer = this.#clock.setTimeout(() => this.#onLongPress(), this.#longPressMs)
      return
    }
    if (this.#pressedAt === undefined) return // a release with no press (started held): ignore
    const heldMs = event.atMs - this.#pressedAt
    this.#pressedAt = undefined
    this.#cancelLong()
    if (this.#longFired) return
    if (heldMs >= this.#longPressMs) {
      // The release arrived before the timer could fire (late delivery): still a long press.
      this.#onLongPress(event.atMs)
      return
    }
    if (!this.#pressToTalk) this.#setMuted(!this.#muted, 'button', event.atMs)
    else if (this.#muted) {
      // Mute is authoritative: a press to talk never opens the microphone behind it.
      this.#logger.info({ panel: 'button', gesture: 'short' }, 'talk while muted: ignored')
    } else {
      this.#logger.info({ panel: 'button', gesture: 'short' }, 'press to talk')
      this.#emit({ kind: 'talk', atMs: event.atMs })
    }
  }

  #onLongPress(atMs = this.#clock.now()): void {
    this.#longTimer = undefined
    this.#longFired = true
    if (this.#pressToTalk) this.#setMuted(!this.#muted, 'button', atMs)
    else if (this.#activity === 'speaking') {
      this.#logger.info({ panel: 'button', gesture: 'long' }, 'long press: stop speaking')
      this.#emit({ kind: 'stop_speaking', atMs })
    } else {
      this.#logger.info(
        { panel: 'button', gesture: 'long', activity: this.#activity },
        'long press while not speaking: ignored',
      )
      this.#emit({ kind: 'long_press_ignored', atMs })
    }
  }

  #setMuted(muted: boolean, source: 'button' | 'remote', atMs: number): void {
    this.#muted = muted
    this.#logger.info({ panel: source, muted }, muted ? 'muted' : 'unmuted')
    this.#render()
    this.#emit({ kind: 'mute', muted, source, atMs })
  }

  #render(): void {
    this.#panel.setLed(this.led)
  }

  #cancelLong(): void {
    if (this.#longTimer) this.#clock.clearTimeout(this.#longTimer)
    this.#longTimer = undefined
  }

  #emit(event: PanelEvent): void {
    for (const l of this.#listeners) {
      try {
        l(event)
      } catch (err) {
        this.#logger.warn(
          { event: 'panel_listener_failed', err: errorText(err) },
          'panel listener failed',
        )
      }
    }
  }
}
