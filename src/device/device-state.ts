import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { LedState } from '../ports/panel.js'
import type { UnreachableReason } from '../ports/provider-listener.js'
import type { Sensitivity } from '../protocol/sensitivity.js'

/** Who changed a setting or asked for a stop: logged, and carried to every subscriber. */
export type CommandSource = 'button' | 'voice' | 'phone' | 'home_assistant' | 'remote'

/**
 * 0–100 %: the volume before anyone set one — 100 %, the audio as it comes, as the speaker played
 * before it had a volume (and as the card's own mixer is set).
 */
export const DEFAULT_VOLUME = 100

/** The sensitivity before anyone set one: each phrase at its configured threshold. */
export const DEFAULT_SENSITIVITY: Sensitivity = 'normal'

/** The timer that rings next, as the status and Home Assistant show it (no label: it is personal). */
export interface NextTimer {
  readonly id: string
  readonly kind: 'timer' | 'alarm'
  readonly dueAt: number
}

/**
 * Where refused input came in: phones' decisions, phones' other signed requests (conversations,
 * grants, volume, push), and other speakers' wake claims.
 */
export type RefusalSource = 'decisions' | 'requests' | 'wake_claims'

/** Refused input since the device started, by where it came in and why (the reason codes). */
type RefusalCounts = Readonly<Record<RefusalSource, Readonly<Record<string, number>>>>

/**
 * One live provider's last attempt to open a session, as the status, the phone and Home Assistant
 * show it: `ok`, or why not (the reason's word and the error's own line, never a key).
 */
export interface ProviderHealth {
  readonly provider: string
  readonly ok: boolean
  readonly reason?: UnreachableReason
  readonly detail?: string
}

/**
 * The local wake check (docs/wake-word.md, "The local second opinion"): `off` (and why), `shadow`
 * (it runs beside each wake, holding nothing, `streak` of `of` confirmed wakes agreed so far),
 * `on` (configured to hold every wake), `earned` (it holds them, having agreed with the household's
 * wakes). `kept`: wakes it refused that the model did not confirm (in shadow: would have kept).
 */
export type WakeCheckStatus =
  | { readonly state: 'off'; readonly why: string }
  | {
      readonly state: 'shadow'
      readonly streak: number
      readonly of: number
      readonly kept: number
    }
  | { readonly state: 'on' }
  | { readonly state: 'earned'; readonly kept: number }

/** Everything the device is, at one moment: what the LED, the status and Home Assistant show. */
export interface DeviceSnapshot {
  readonly muted: boolean
  readonly volume: number
  /** The wake word's sensitivity (it applies only when listen.mode is `wake`). */
  readonly sensitivity: Sensitivity
  /** The voice driver's own state ('muted' when muted, as it reports it). */
  readonly activity: LedState
  /** The status topic's state: `error` while a fault holds, then a ringing timer, then activity. */
  readonly state: LedState
  /** What the LED shows: mute (it always wins, docs/design.md §6), else `state`. */
  readonly led: LedState
  /** Why the state is `error` (the oldest fault), absent when all is well. */
  readonly reason: string | undefined
  readonly pendingApprovals: number
  /** Ids of the timers ringing now. */
  readonly ringing: readonly string[]
  readonly nextTimer: NextTimer | null
  /** Local wakes the live model's second opinion did not confirm, since the device started. */
  readonly falseWakes: number
  /** The local wake check, in wake mode; undefined without a wake word. */
  readonly wakeCheck: WakeCheckStatus | undefined
  /** What was refused as forged, stale, replayed or malformed: a household's security signal. */
  readonly refused: RefusalCounts
  /** Each provider tried since the device started, in the order first tried: its last attempt. */
  readonly providers: readonly ProviderHealth[]
}

/** What changed, so a subscriber that cares about one thing can skip the rest. */
export type DeviceChange =
  | { readonly kind: 'muted'; readonly source: CommandSource }
  | { readonly kind: 'volume'; readonly source: CommandSource }
  | { readonly kind: 'sensitivity'; readonly source: CommandSource }
  | { readonly kind: 'activity' }
  | { readonly kind: 'fault' }
  | { readonly kind: 'approvals' }
  | { readonly kind: 'timers' }
  | { readonly kind: 'false_wake' }
  | { readonly kind: 'wake_check' }
  | { readonly kind: 'refusal'; readonly source: RefusalSource }
  | { readonly kind: 'providers' }

/** "Stop": the speaker falls silent — a reply, a ringing timer, an announcement. */
export interface StopCommand {
  readonly source: CommandSource
}

export interface DeviceStateOptions {
  readonly logger?: Logger
  readonly muted?: boolean
  readonly volume?: number
  readonly sensitivity?: Sensitivity
}

/**
 * The one owner of the device's state (docs/architecture.md, "The device's state"): mute, volume,
 * the wake word's sensitivity, faults, the voice driver's activity, pending approvals, ringing timers and the providers' health. The panel, the MQTT
 * status, the phone protocol and Home Assistant read it and subscribe to it, and send their
 * commands into it; nobody else keeps a copy. No I/O: remembering the settings is the subscriber's
 * business (app/), so a restart keeps it.
 */
export class DeviceState {
  readonly #log: Logger | undefined
  readonly #listeners = new Set<(snapshot: DeviceSnapshot, change: DeviceChange) => void>()
  readonly #stops = new Set<(command: StopCommand) => void>()
  readonly #faults = new Map<string, string>()
  readonly #approvals = new Set<string>()
  readonly #ringing = new Set<string>()
  readonly #providers = new Map<string, ProviderHealth>()
  #muted: boolean
  #volume: number
  #sensitivity: Sensitivity
  #activity: LedState = 'idle'
  #nextTimer: NextTimer | null = null
  #falseWakes = 0
  #wakeCheck: WakeCheckStatus | undefined
  readonly #refused: Record<RefusalSource, Map<string, number>> = {
    decisions: new Map(),
    requests: new Map(),
    wake_claims: new Map(),
  }
  #snapshot: DeviceSnapshot | undefined

  constructor(options: DeviceStateOptions = {}) {
    this.#log = options.logger
    this.#muted = options.muted ?? false
    this.#volume = clampVolume(options.volume ?? DEFAULT_VOLUME)
    this.#sensitivity = options.sensitivity ?? DEFAULT_SENSITIVITY
  }

  get muted(): boolean {
    return this.#muted
  }

  get volume(): number {
    return this.#volume
  }

  get sensitivity(): Sensitivity {
    return this.#sensitivity
  }

  get activity(): LedState {
    return this.#activity
  }

  get snapshot(): DeviceSnapshot {
    this.#snapshot ??= this.#build()
    return this.#snapshot
  }

  /** Subscribes to every change; returns the unsubscribe function. */
  subscribe(listener: (snapshot: DeviceSnapshot, change: DeviceChange) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** Subscribes to stop commands (the driver, the timers, the announcer); returns the unsubscribe. */
  onStop(listener: (command: StopCommand) => void): () => void {
    this.#stops.add(listener)
    return () => this.#stops.delete(listener)
  }

  /** Mute: the button's, a phone's, Home Assistant's — one switch. Returns whether it changed. */
  setMuted(muted: boolean, source: CommandSource): boolean {
    if (muted === this.#muted) return false
    this.#muted = muted
    this.#log?.info({ device: source, muted }, muted ? 'muted' : 'unmuted')
    this.#changed({ kind: 'muted', source })
    return true
  }

  /** Volume in percent, rounded and held to 0–100. Returns the volume now set. */
  setVolume(percent: number, source: CommandSource): number {
    const v = clampVolume(percent)
    if (v === this.#volume) return v
    this.#volume = v
    this.#log?.info({ device: source, volume: v }, 'volume set')
    this.#changed({ kind: 'volume', source })
    return v
  }

  /** The wake word's sensitivity, from Home Assistant or a phone. Returns whether it changed. */
  setSensitivity(sensitivity: Sensitivity, source: CommandSource): boolean {
    if (sensitivity === this.#sensitivity) return false
    this.#sensitivity = sensitivity
    this.#log?.info({ device: source, sensitivity }, 'wake sensitivity set')
    this.#changed({ kind: 'sensitivity', source })
    return true
  }

  /** The voice driver's state changed. */
  setActivity(activity: LedState): void {
    if (activity === this.#activity) return
    this.#activity = activity
    this.#changed({ kind: 'activity' })
  }

  /** `source` (e.g. "microphone") is failing, for `reason`; `undefined` clears it. */
  fault(source: string, reason: string | undefined): void {
    if (reason === undefined ? !this.#faults.has(source) : this.#faults.get(source) === reason) {
      return
    }
    if (reason === undefined) this.#faults.delete(source)
    else this.#faults.set(source, reason)
    this.#changed({ kind: 'fault' })
  }

  /** An approval is out to the phones (`true`) or settled (`false`). */
  approval(id: string, pending: boolean): void {
    if (pending === this.#approvals.has(id)) return
    if (pending) this.#approvals.add(id)
    else this.#approvals.delete(id)
    this.#changed({ kind: 'approvals' })
  }

  /** A timer started (`true`) or stopped (`false`) ringing. */
  ringing(id: string, ringing: boolean): void {
    if (ringing === this.#ringing.has(id)) return
    if (ringing) this.#ringing.add(id)
    else this.#ringing.delete(id)
    this.#changed({ kind: 'timers' })
  }

  /** The timer due next, or null. */
  setNextTimer(next: NextTimer | null): void {
    const same =
      next === this.#nextTimer ||
      (next !== null &&
        this.#nextTimer !== null &&
        next.id === this.#nextTimer.id &&
        next.dueAt === this.#nextTimer.dueAt)
    if (same) return
    this.#nextTimer = next
    this.#changed({ kind: 'timers' })
  }

  /** A local wake the second opinion did not confirm: the session closed without a word. */
  countFalseWake(): void {
    this.#falseWakes++
    this.#changed({ kind: 'false_wake' })
  }

  /** The local wake check's state changed (off and why, shadow, on, earned). */
  setWakeCheck(status: WakeCheckStatus): void {
    if (JSON.stringify(status) === JSON.stringify(this.#wakeCheck)) return
    this.#wakeCheck = status
    this.#changed({ kind: 'wake_check' })
  }

  /**
   * Input from `source` was refused for `reason` (it did not verify, was stale, replayed or
   * malformed). Counted only: the adapter that refused it has logged it.
   */
  refused(source: RefusalSource, reason: string): void {
    const counts = this.#refused[source]
    counts.set(reason, (counts.get(reason) ?? 0) + 1)
    this.#changed({ kind: 'refusal', source })
  }

  /** A provider's session opened, or did not and why (told by the failover's listener). */
  providerHealth(health: ProviderHealth): void {
    const was = this.#providers.get(health.provider)
    if (was?.ok === health.ok && was.reason === health.reason && was.detail === health.detail) {
      return
    }
    this.#providers.set(health.provider, health)
    this.#changed({ kind: 'providers' })
  }

  /** "Stop" from the button, a voice, a phone or Home Assistant: whatever plays falls silent. */
  stop(source: CommandSource): void {
    this.#log?.info({ device: source }, 'stop')
    for (const l of this.#stops) {
      try {
        l({ source })
      } catch (err) {
        this.#log?.warn({ event: 'device_listener_failed', err: errorText(err) }, 'stop failed')
      }
    }
  }

  #build(): DeviceSnapshot {
    const reason = this.#faults.values().next().value
    const ringing = [...this.#ringing]
    const state: LedState =
      reason !== undefined
        ? 'error'
        : ringing.length > 0
          ? 'ringing'
          : this.#muted
            ? 'muted'
            : this.#activity
    return {
      muted: this.#muted,
      volume: this.#volume,
      sensitivity: this.#sensitivity,
      activity: this.#activity,
      state,
      led: this.#muted ? 'muted' : state,
      reason,
      pendingApprovals: this.#approvals.size,
      ringing,
      nextTimer: this.#nextTimer,
      falseWakes: this.#falseWakes,
      wakeCheck: this.#wakeCheck,
      refused: {
        decisions: Object.fromEntries(this.#refused.decisions),
        requests: Object.fromEntries(this.#refused.requests),
        wake_claims: Object.fromEntries(this.#refused.wake_claims),
      },
      providers: [...this.#providers.values()],
    }
  }

  #changed(change: DeviceChange): void {
    this.#snapshot = undefined
    const snapshot = this.snapshot
    for (const l of this.#listeners) {
      try {
        l(snapshot, change)
      } catch (err) {
        this.#log?.warn(
          { event: 'device_listener_failed', change: change.kind, err: errorText(err) },
          'device state listener failed',
        )
      }
    }
  }
}

/** A volume as the device holds it: a whole percent from 0 to 100 (NaN is refused by callers). */
export function clampVolume(percent: number): number {
  return Math.max(0, Math.min(100, Math.round(percent)))
}
