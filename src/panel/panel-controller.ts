import { tellEach } from '../core/listeners.js'
import type { Logger } from '../core/logger.js'
import { DeviceState } from '../device/device-state.js'
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
  | { readonly kind: 'stop_ringing'; readonly atMs: number }
  /**
   * Talk by the button: open a session, or talk over the one speaking (`talk` below). `heldMs`:
   * how long it was held before it talked — a person may start speaking as they press.
   */
  | { readonly kind: 'talk'; readonly atMs: number; readonly heldMs: number }
  | { readonly kind: 'long_press_ignored'; readonly atMs: number }
  | { readonly kind: 'volume'; readonly volume: number; readonly atMs: number }

export interface PanelControllerOptions {
  readonly panel: Panel
  readonly clock: Clock
  readonly logger: Logger
  /** Held this long, a press is a long press (stop talking) rather than a short one (mute). */
  readonly longPressMs?: number
  /** The device's state, which this panel shows and sends its gestures into (one per device). */
  readonly device?: DeviceState
  /** Only without `device`: the state this panel starts in. */
  readonly initiallyMuted?: boolean
  /**
   * How the button talks, if it does. `press` (`listen.mode` "button"): a short press talks and a
   * long press toggles mute (which still wins: while muted a short press does nothing, only the
   * long press unmutes). `hold` (`listen.mode` "wake"): a long press let go before the volume
   * starts talks, for when the wake phrase is not heard (a loud room) — the short press stays mute.
   * Absent (`speech`): the button never talks; speech opens a session anyway.
   */
  readonly talk?: 'press' | 'hold'
}

const DEFAULT_LONG_PRESS_MS = 800
/** Held this much longer than a long press while nothing plays, the button sets the volume. */
export const VOLUME_HOLD_MS = 1000
/** While setting the volume, one step every this many ms … */
export const VOLUME_STEP_MS = 600
/** … of this many percent. */
const VOLUME_STEP = 10
/** The lowest volume the button steps to: the button never silences the speaker. */
export const VOLUME_BUTTON_FLOOR = 10

/**
 * The panel's behaviour, whatever the wiring (docs/design.md §6, hardware/button.md): a short press
 * toggles mute; a press held for `longPressMs` while the speaker talks stops it without muting —
 * recognised while still held, so the speaker falls silent under the finger; any press while a
 * timer rings stops the ring; held on while nothing plays, it steps the volume (VOLUME_* below),
 * shown on colour LEDs. The LED shows the device's state (DeviceState.led): mute wins over every
 * other state. Mute and volume are the DeviceState's: this holds no copy.
 * With `talk: 'press'` (`listen.mode` "button") the short press talks — opens a session, or talks
 * over the reply — and the long press toggles mute, recognised while held. With `talk: 'hold'`
 * (`listen.mode` "wake") a long press while nothing plays talks when let go, unless held on into
 * the volume.
 */
export class PanelController {
  readonly #panel: Panel
  readonly #clock: Clock
  readonly #logger: Logger
  readonly #longPressMs: number
  readonly #talk: 'press' | 'hold' | undefined
  readonly #listeners = new Set<(event: PanelEvent) => void>()
  readonly #device: DeviceState
  readonly #unsubscribe: () => void
  #pressedAt: number | undefined
  #longTimer: TimerHandle | undefined
  #longFired = false
  /** The long press of this hold was one that talks when let go (`talk: 'hold'`). */
  #talkOnRelease = false
  /**
   * What the LED shows instead of the state while a hold would talk if let go now: `listening`,
   * the cue to let go (or to speak) — never over mute, which always wins.
   */
  #preview: LedState | undefined
  #volumeTimer: TimerHandle | undefined
  #volumeSet = false
  /** The direction of the last volume hold: the next hold goes the other way. */
  #volumeUp = true
  /** The time of the button gesture whose mute change is being reported. */
  #buttonAt: number | undefined
  #lastLed: LedState | undefined

  constructor(opts: PanelControllerOptions) {
    this.#panel = opts.panel
    this.#clock = opts.clock
    this.#logger = opts.logger
    this.#longPressMs = opts.longPressMs ?? DEFAULT_LONG_PRESS_MS
    this.#device =
      opts.device ?? new DeviceState({ logger: opts.logger, muted: opts.initiallyMuted ?? false })
    this.#unsubscribe = this.#device.subscribe((snapshot, change) => {
      if (change.kind === 'muted') {
        const source = change.source === 'button' ? 'button' : 'remote'
        const atMs = this.#buttonAt ?? this.#clock.now()
        this.#emit({ kind: 'mute', muted: snapshot.muted, source, atMs })
      }
      this.#render()
    })
    this.#talk = opts.talk
  }

  get muted(): boolean {
    return this.#device.muted
  }

  get activity(): LedState {
    return this.#device.activity
  }

  /** What the LED shows now. */
  get led(): LedState {
    return this.#device.snapshot.led
  }

  async start(): Promise<void> {
    this.#render(true)
    await this.#panel.start((event) => this.#onButton(event))
  }

  /** Subscribes to gesture results; returns the unsubscribe function. */
  on(listener: (event: PanelEvent) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** The voice driver's state (into the device's state, which the LED shows). */
  setActivity(activity: Activity): void {
    this.#device.setActivity(activity)
  }

  /** Mute from elsewhere (a phone, the status topic): same effect as the button, same event. */
  setMuted(muted: boolean): void {
    this.#device.setMuted(muted, 'remote')
  }

  async close(): Promise<void> {
    this.#cancelLong()
    this.#cancelVolume()
    this.#unsubscribe()
    this.#listeners.clear()
    await this.#panel.close()
  }

  #onButton(event: ButtonEvent): void {
    if (event.kind === 'press') {
      if (this.#pressedAt !== undefined) return // a second press without a release: ignore
      this.#pressedAt = event.atMs
      this.#longFired = false
      this.#talkOnRelease = false
      this.#longTimer = this.#clock.setTimeout(() => this.#onLongPress(), this.#longPressMs)
      return
    }
    if (this.#pressedAt === undefined) return // a release with no press (started held): ignore
    const heldMs = event.atMs - this.#pressedAt
    this.#pressedAt = undefined
    this.#cancelLong()
    this.#cancelVolume()
    try {
      this.#onRelease(event.atMs, heldMs)
    } finally {
      // After the talk: the session it opened shows `listening` itself, with no dark blink between.
      this.#showPreview(undefined)
    }
  }

  #onRelease(atMs: number, heldMs: number): void {
    if (this.#volumeSet) {
      this.#volumeSet = false
      this.#emit({ kind: 'volume', volume: this.#device.volume, atMs })
      return
    }
    if (this.#longFired || heldMs >= this.#longPressMs) {
      // A release before the timer could fire (late delivery) is still a long press.
      if (!this.#longFired) this.#onLongPress(atMs)
      if (this.#talkOnRelease) this.#talkNow(atMs, 'long', heldMs)
      return
    }
    if (this.#stopRinging(atMs)) return
    if (this.#talk === 'press') this.#talkNow(atMs, 'short', heldMs)
    else this.#toggleMute(atMs)
  }

  #talkNow(atMs: number, gesture: 'short' | 'long', heldMs: number): void {
    if (this.#device.muted) {
      // Mute is authoritative: talking by the button never opens the microphone behind it.
      this.#logger.info({ panel: 'button', gesture }, 'talk while muted: ignored')
      return
    }
    this.#logger.info({ panel: 'button', gesture, heldMs }, 'press to talk')
    this.#emit({ kind: 'talk', atMs, heldMs })
  }

  #onLongPress(atMs = this.#clock.now()): void {
    this.#longTimer = undefined
    this.#longFired = true
    if (this.#stopRinging(atMs)) return
    const activity = this.#device.activity
    if (this.#talk === 'press') this.#toggleMute(atMs)
    else if (activity === 'speaking') {
      this.#logger.info({ panel: 'button', gesture: 'long' }, 'long press: stop speaking')
      this.#emit({ kind: 'stop_speaking', atMs })
      this.#device.stop('button')
    } else {
      if (this.#talk === 'hold') {
        this.#talkOnRelease = true
        if (this.#pressedAt !== undefined) this.#showPreview('listening')
        this.#logger.info(
          { panel: 'button', gesture: 'long', activity },
          'long press while not speaking: let go to talk, hold on to set the volume',
        )
      } else {
        this.#logger.info(
          { panel: 'button', gesture: 'long', activity },
          'long press while not speaking: ignored (hold on to set the volume)',
        )
        this.#emit({ kind: 'long_press_ignored', atMs })
      }
      if (this.#pressedAt !== undefined) {
        this.#volumeTimer = this.#clock.setTimeout(() => this.#volumeStart(), VOLUME_HOLD_MS)
      }
    }
  }

  /** The button's mute: into the device's state, whose change comes back as the `mute` event. */
  #toggleMute(atMs: number): void {
    this.#buttonAt = atMs
    try {
      this.#device.setMuted(!this.#device.muted, 'button')
    } finally {
      this.#buttonAt = undefined
    }
  }

  /** A press while a timer rings only stops the ring. */
  #stopRinging(atMs: number): boolean {
    if (this.#device.snapshot.ringing.length === 0) return false
    this.#logger.info({ panel: 'button' }, 'press while ringing: stop the ring')
    this.#emit({ kind: 'stop_ringing', atMs })
    this.#device.stop('button')
    return true
  }

  #volumeStart(): void {
    this.#showPreview(undefined)
    this.#volumeSet = true
    this.#volumeUp = !this.#volumeUp
    this.#panel.showLevel?.(this.#device.volume)
    this.#volumeTimer = this.#clock.setTimeout(() => this.#volumeStep(), VOLUME_STEP_MS)
  }

  /** One step while held: toward the end it is going, turning round at 100 % and at the floor. */
  #volumeStep(): void {
    const v = this.#device.volume
    if (this.#volumeUp && v >= 100) this.#volumeUp = false
    else if (!this.#volumeUp && v <= VOLUME_BUTTON_FLOOR) this.#volumeUp = true
    const next = this.#volumeUp
      ? Math.min(100, v + VOLUME_STEP)
      : Math.max(VOLUME_BUTTON_FLOOR, v - VOLUME_STEP)
    this.#device.setVolume(next, 'button')
    this.#panel.showLevel?.(this.#device.volume)
    this.#volumeTimer = this.#clock.setTimeout(() => this.#volumeStep(), VOLUME_STEP_MS)
  }

  #showPreview(led: LedState | undefined): void {
    if (led === this.#preview) return
    this.#preview = led
    this.#render()
  }

  #render(force = false): void {
    const led = this.#preview && !this.#device.muted ? this.#preview : this.led
    if (!force && led === this.#lastLed) return
    this.#lastLed = led
    this.#panel.setLed(led)
  }

  #cancelLong(): void {
    if (this.#longTimer) this.#clock.clearTimeout(this.#longTimer)
    this.#longTimer = undefined
  }

  #cancelVolume(): void {
    if (this.#volumeTimer) this.#clock.clearTimeout(this.#volumeTimer)
    this.#volumeTimer = undefined
  }

  #emit(event: PanelEvent): void {
    tellEach(this.#listeners, (l) => l(event), this.#logger, { event: 'panel_listener_failed' })
  }
}
