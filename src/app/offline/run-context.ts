import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Logger } from '../../core/logger.js'

/** What really happened, filled in by observers; checked against the script at the end. */
export interface Seen {
  approvedOnPhone: boolean
  /** Anna tapped Approve on the front door (before the device heard of it). */
  annaTapped: boolean
  /** Every request's card Anna's phone showed, in order. */
  phoneAsked: string[]
  /** Home Assistant's front door lock went to `unlocked`. */
  doorUnlocked: boolean
  /** …at a moment Anna had not yet tapped Approve. */
  doorBeforeYes: boolean
  lightOn: boolean
  garageMoved: boolean
  drops: number
  mutePressed: boolean
  unmutePressed: boolean
  streamEnd: boolean
}

/** One line of the timeline: who (`[phone]`, `[led]`…) and what. */
export type Say = (who: string, text: string) => void

/** What every part of the offline run shares: where it prints, what it saw, what to undo. */
export interface RunContext {
  readonly out: NodeJS.WritableStream
  readonly logger: Logger
  /** Where the store, the phones' keys and the speaker WAV go. */
  readonly work: string
  readonly say: Say
  readonly seen: Seen
  /** Undone in the reverse order when the run ends, whatever happened. */
  defer(undo: () => Promise<void> | void): void
  /** Runs `fn` in `ms`, unless the run has ended first. */
  later(ms: number, fn: () => void): void
}

/**
 * The typed reply of either fake model at the end of the scene, from what the house saw and
 * whether the text model was sent the door's result (never canned: it proves the history went).
 */
export function typedRecap(doorAnswered: boolean, seen: Seen): string {
  const door =
    doorAnswered && seen.doorUnlocked
      ? seen.approvedOnPhone
        ? 'Anna approved the front door on her phone'
        : 'the front door was unlocked'
      : 'the front door was not unlocked'
  const garage = seen.garageMoved ? 'the garage door was opened' : 'the garage stayed shut'
  return `You are welcome. ${door}; ${garage}.`
}

/**
 * A demo's folder without the last run's store and phone keys. The whole store goes, its WAL and
 * its copies too: with a copy left, the store would take the missing file for a destroyed card
 * and restore the last run's chat (adapters/sqlite/restore.ts).
 */
export function emptyOfLastRun(work: string): void {
  mkdirSync(work, { recursive: true })
  for (const f of readdirSync(work)) {
    if (f.startsWith('nocturn.db')) rmSync(join(work, f), { recursive: true, force: true })
  }
  rmSync(join(work, 'phones'), { recursive: true, force: true })
}

/**
 * A fresh run: `workDir` emptied of an earlier run's store and phones (kept afterwards), or a
 * temporary folder (removed); lines printed to `out` stamped with the time since now. `unwind`
 * ends it.
 */
export function runContext(
  out: NodeJS.WritableStream,
  logger: Logger,
  workDir: string | undefined,
): { ctx: RunContext; unwind: () => Promise<void> } {
  const t0 = Date.now()
  const work = workDir ?? mkdtempSync(join(tmpdir(), 'nocturn-offline-'))
  emptyOfLastRun(work)
  const stack: (() => Promise<void> | void)[] = []
  if (!workDir) stack.push(() => rmSync(work, { recursive: true, force: true }))
  const timers: NodeJS.Timeout[] = []
  stack.push(() => timers.forEach(clearTimeout))
  const ctx: RunContext = {
    out,
    logger,
    work,
    say: (who, text) =>
      out.write(
        `${`+${((Date.now() - t0) / 1000).toFixed(2)}s`.padStart(8)}  ${who.padEnd(9)} ${text}\n`,
      ),
    seen: {
      approvedOnPhone: false,
      annaTapped: false,
      phoneAsked: [],
      doorUnlocked: false,
      doorBeforeYes: false,
      lightOn: false,
      garageMoved: false,
      drops: 0,
      mutePressed: false,
      unmutePressed: false,
      streamEnd: false,
    },
    defer: (undo) => stack.push(undo),
    later: (ms, fn) => timers.push(setTimeout(fn, ms)),
  }
  const unwind = async () => {
    for (const fn of stack.reverse()) await Promise.resolve(fn()).catch(() => {})
  }
  return { ctx, unwind }
}
