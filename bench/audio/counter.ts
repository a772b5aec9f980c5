/**
 * Sample-counter audio: sample j of a reply is BASE + (j mod SPAN), so every sample heard on the
 * monitor names its place in its reply. Never silent, so any silence inside a reply is a gap, and
 * any jump is lost audio.
 */
const BASE = 1000
const SPAN = 30_000

export function counterReply(samples: number): Uint8Array {
  const out = new Int16Array(samples)
  for (let j = 0; j < samples; j++) out[j] = BASE + (j % SPAN)
  return new Uint8Array(out.buffer)
}

export interface GapReport {
  /** Replies whose start was heard. */
  readonly replies: number
  /** Interruptions inside a reply: a silence (underrun) or a jump (lost samples). */
  readonly gaps: number
  /** Each gap's length in ms (silence heard plus samples lost). */
  readonly gapMs: number[]
  /** For each reply that began late into its audio, the ms missing at its start. */
  readonly clippedStartMs: number[]
  /** Replies heard only in part (cut short before their last sample). */
  readonly cutShort: number
  /** Replies whose last samples came out only after a pause (with the next reply). */
  readonly lateTails: number
  /** Short backward jumps: the sound server re-rendering (rewinding) what the monitor had seen. */
  readonly rewinds: number
  /** Samples that were not counter audio where counter audio was due (mixing errors). */
  readonly foreign: number
  /** For each reply heard, where in `heard` its sample 0 was (or would have been, if clipped). */
  readonly startsAt: number[]
  /** For each gap, where in `heard` it ended. */
  readonly gapsEndAt: number[]
}

/** Walks what the monitor heard against the lengths (in samples) of the replies played, in order. */
export function countGaps(heard: Int16Array, lengths: readonly number[], rate = 24_000): GapReport {
  let r = -1
  let j = 0 // next sample expected of reply r
  let silence = 0
  const gapMs: number[] = []
  const clippedStartMs: number[] = []
  const startsAt: number[] = []
  const gapsEndAt: number[] = []
  let cutShort = 0
  let rewinds = 0
  let lateTails = 0
  let foreign = 0
  const ms = (n: number) => (n / rate) * 1000
  const near = rate / 10 // 100 ms
  const pause = rate / 4 // replies are played at least 300 ms apart
  let quiet = pause // zeros since the last counter sample
  for (let i = 0; i < heard.length; i++) {
    const x = heard[i] as number
    const due = r >= 0 && j < (lengths[r] ?? 0)
    if (x === 0) {
      quiet++
      if (due) silence++
      continue
    }
    const afterPause = quiet >= pause
    quiet = 0
    const idx = x - BASE
    if (idx < 0 || idx >= SPAN) {
      foreign++
      continue
    }
    if (due && idx === j % SPAN) {
      // A reply's tail heard only after a pause: held back until the next reply pushed it out.
      if (silence >= pause) lateTails++
      else if (silence > 0) {
        gapMs.push(ms(silence))
        gapsEndAt.push(i)
      }
      if (silence > 0 && process.env.BENCH_DEBUG)
        console.log(
          `reply ${r}: ${ms(silence).toFixed(1)} ms silent at ${ms(j).toFixed(1)} ms, ${(lengths[r] ?? 0) - j} samples before its end`,
        )
      silence = 0
      j++
      continue
    }
    if ((afterPause || !due) && idx < near && r + 1 < lengths.length) {
      // A new reply begins, after a pause or the last one's end (late by `idx` samples if its
      // start was not heard).
      if (due) cutShort++
      if (idx > 0) clippedStartMs.push(ms(idx))
      startsAt.push(i - idx)
      r++
      j = idx + 1
      silence = 0
      continue
    }
    if (!due) {
      foreign++
      continue
    }
    const d = (idx - (j % SPAN) + SPAN) % SPAN
    if (silence >= pause) {
      // A pause as long as those between replies inside a reply, then a jump: cut short there.
      cutShort++
      j += d + 1
    } else if (d <= SPAN / 2) {
      // A jump forward inside the reply: samples lost.
      gapMs.push(ms(silence + d))
      gapsEndAt.push(i)
      if (process.env.BENCH_DEBUG)
        console.log(
          `reply ${r}: ${ms(silence).toFixed(1)} ms silent + ${d} samples lost at ${ms(j).toFixed(1)} ms, ${(lengths[r] ?? 0) - j} samples before its end`,
        )
      j += d + 1
    } else {
      // A jump back: the sound server re-rendering (rewinding) what the monitor had already seen.
      rewinds++
      j = Math.max(0, j - (SPAN - d)) + 1
    }
    silence = 0
  }
  return {
    replies: r + 1,
    gaps: gapMs.length,
    gapMs,
    clippedStartMs,
    cutShort,
    lateTails,
    rewinds,
    foreign,
    startsAt,
    gapsEndAt,
  }
}

/** Where in `heard`, at or after sample `from`, the first counter sample is, and its index. */
export function firstHeardFrom(
  heard: Int16Array,
  from: number,
  gain = 1,
): { at: number; index: number } | undefined {
  for (let i = Math.max(0, from); i < heard.length; i++) {
    const x = heard[i] as number
    // Behind a gain stage the sample is the counter scaled: read back, it is within a sample or so.
    if (x !== 0) return { at: i, index: Math.round(x / gain) - BASE }
  }
  return undefined
}
