import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Clock } from '../ports/clock.js'
import type { Onset } from '../ports/onset.js'
import type { SettingsStore } from '../ports/settings-store.js'
import type { DeviceState, WakeCheckStatus } from './device-state.js'

/**
 * Confirmed wakes in a row the local check must agree with before it may hold audio. Each
 * confirmed wake it agrees with is one of the household's voices heard as the phrase; a run of 5
 * with no refusal between is more than the 1–2 a check that cannot hear a voice would let through
 * by luck (flite's voices it hears nearly always, espeak-ng's never: bench/RESULTS.md), and few
 * enough that a household that speaks to its speaker daily has it within a day or two.
 */
export const EARNED_AFTER = 5
/**
 * A local refusal followed this soon by the household trying again another way (the button's
 * hold, a phone's "it missed me") was a wake the check kept from them: the only evidence there is,
 * since a refused wake never reaches the model.
 */
const DEMOTE_WITHIN_MS = 60_000
/** Its one home in the device's remembered settings. */
const SETTING = 'wake_check_trust'

interface Stored {
  /** What it was earned on: the phrases and the check's settings (a change starts over). */
  readonly key: string
  readonly earned: boolean
  readonly streak: number
  /** Wakes it refused that the model did not confirm either (shadow: it would have kept them). */
  readonly kept: number
}

export interface WakeCheckTrustOptions {
  readonly store: SettingsStore
  /** The wake phrases and the check's threshold, model and window, as one string. */
  readonly key: string
  readonly clock: Clock
  readonly logger: Logger
  /** Where the status a phone reads is shown. */
  readonly device?: DeviceState
}

/**
 * Whether the local check (`listen.localCheck.enabled: 'auto'`) has earned the right to hold a
 * wake's audio (docs/wake-word.md, "The local second opinion"). Until it has, it runs beside each
 * session in shadow, holding nothing; each of its verdicts is set beside the model's: agreement on
 * a confirmed wake adds one to a streak, a refusal of one ends it. After `EARNED_AFTER` in a row it
 * gates as `enabled: true` does. A refusal followed within `DEMOTE_WITHIN_MS` by the household
 * trying again another way sends it back to shadow. Kept in the remembered settings, keyed on the
 * phrases and the check's settings.
 */
export class WakeCheckTrust {
  readonly #o: WakeCheckTrustOptions
  #state: Stored
  /** The wake whose session runs: the check's verdict and the model's, as they come. */
  #wake: { agreed?: boolean; confirmed?: boolean } | undefined
  /** When the gating check last refused a wake. */
  #refusedAt: number | undefined

  constructor(o: WakeCheckTrustOptions) {
    this.#o = o
    this.#state = this.#restore()
    this.#show()
    const s = this.#state
    o.logger.info(
      { wakeCheck: s.earned ? 'earned' : 'shadow', streak: s.streak },
      s.earned
        ? 'the local wake check holds each wake until it hears the phrase (earned)'
        : `the local wake check runs in shadow until it agrees with ${EARNED_AFTER} confirmed wakes in a row (${s.streak} so far)`,
    )
  }

  /** It holds the audio of the next wake (it has earned it); else it runs beside the session. */
  get gates(): boolean {
    return this.#state.earned
  }

  /** Every onset the room was told of; `running`: it talked over a session (a barge-in). */
  heard(onset: Onset, running: boolean): void {
    if (running) return
    if (onset.cause === 'wake') {
      this.#wake = {}
      return
    }
    this.#wake = undefined
    if (onset.cause === 'button') this.retried('the button was held to talk')
  }

  /** The check's verdict on this wake's phrase. */
  verdict(agreed: boolean): void {
    const w = this.#wake
    if (!w) return
    if (this.#state.earned && !agreed) this.#refusedAt = this.#o.clock.now()
    this.#settle({ ...w, agreed })
  }

  /** The session ended: whether the model's transcription confirmed the wake. */
  ended(confirmed: boolean): void {
    const w = this.#wake
    if (!w) return
    this.#settle({ ...w, confirmed })
  }

  /** The household tried again another way (`how`): a refusal just before it was a miss. */
  retried(how: string): void {
    const at = this.#refusedAt
    if (at === undefined || !this.#state.earned) return
    const ms = this.#o.clock.now() - at
    this.#refusedAt = undefined
    if (ms > DEMOTE_WITHIN_MS) return
    this.#o.logger.warn(
      { event: 'wake_check_demoted', how, afterMs: ms },
      `the local wake check refused a wake and ${how} ${Math.round(ms / 1000)} s later: back in shadow`,
    )
    this.#save({ ...this.#state, earned: false, streak: 0 })
  }

  #settle(w: { agreed?: boolean; confirmed?: boolean }): void {
    if (w.agreed === undefined || w.confirmed === undefined) {
      this.#wake = w
      return
    }
    this.#wake = undefined
    const s = this.#state
    if (!w.confirmed) {
      if (!w.agreed) this.#save({ ...s, kept: s.kept + 1 })
      return
    }
    if (s.earned) return
    if (!w.agreed) {
      if (s.streak > 0) this.#save({ ...s, streak: 0 })
      return
    }
    const streak = s.streak + 1
    if (streak < EARNED_AFTER) {
      this.#save({ ...s, streak })
      return
    }
    this.#o.logger.info(
      { event: 'wake_check_earned' },
      `local wake check earned: it agreed with ${EARNED_AFTER} confirmed wakes in a row`,
    )
    this.#save({ ...s, earned: true, streak })
  }

  #save(next: Stored): void {
    this.#state = next
    this.#show()
    try {
      this.#o.store.setSetting(SETTING, JSON.stringify(next), this.#o.clock.now())
    } catch (err) {
      this.#o.logger.warn(
        { event: 'setting_not_saved', setting: SETTING, err: errorText(err) },
        'the local wake check’s trust not remembered',
      )
    }
  }

  #show(): void {
    const s = this.#state
    const status: WakeCheckStatus = s.earned
      ? { state: 'earned', kept: s.kept }
      : { state: 'shadow', streak: s.streak, of: EARNED_AFTER, kept: s.kept }
    this.#o.device?.setWakeCheck(status)
  }

  /** What the store remembers; nothing, something unreadable or another key: shadow, streak 0. */
  #restore(): Stored {
    const fresh: Stored = { key: this.#o.key, earned: false, streak: 0, kept: 0 }
    const raw = this.#o.store.getSetting(SETTING)
    if (raw === undefined) return fresh
    const stored = parse(raw)
    if (!stored) {
      this.#o.logger.warn(
        { event: 'setting_unreadable', setting: SETTING },
        'the local wake check’s stored trust is unreadable: it starts again in shadow',
      )
      return fresh
    }
    if (stored.key !== this.#o.key) {
      this.#o.logger.info(
        {},
        'the wake phrases or the local check’s settings changed: it starts again in shadow',
      )
      return fresh
    }
    return stored
  }
}

function parse(raw: string): Stored | undefined {
  try {
    const v = JSON.parse(raw) as Partial<Stored>
    const count = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0
    if (typeof v.key !== 'string' || typeof v.earned !== 'boolean') return undefined
    if (!count(v.streak) || !count(v.kept)) return undefined
    return { key: v.key, earned: v.earned, streak: v.streak as number, kept: v.kept as number }
  } catch {
    return undefined
  }
}
