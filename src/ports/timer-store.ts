/**
 * TimerStore: timers and alarms that must survive a restart — a kitchen timer set before a power
 * cut still rings (or is reported missed) when the speaker is back.
 */
export interface TimerStore {
  addTimer(timer: NewTimer): StoredTimer
  /** Timers neither rung nor cancelled, soonest first. */
  pendingTimers(): StoredTimer[]
  /** Marks a pending timer done; returns false when it was not pending. */
  finishTimer(id: string, at: number, outcome: TimerOutcome): boolean
}

export type TimerKind = 'timer' | 'alarm'
export type TimerOutcome = 'rang' | 'cancelled' | 'missed'

export interface NewTimer {
  readonly kind: TimerKind
  readonly label: string | null
  readonly dueAt: number
  readonly createdAt: number
}

export interface StoredTimer extends NewTimer {
  readonly id: string
}
