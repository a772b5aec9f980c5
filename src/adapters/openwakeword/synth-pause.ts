/**
 * A pause the speaker did not make (issue 46): "hey jarvis what time is it" said in one breath
 * scores lower than the phrase followed by a pause, since the head learnt the phrase followed by
 * silence or noise and the command's first frames enter the newest embedding windows before the
 * score has risen. So near a threshold the detector can also score the window "as if the speaker
 * had paused": the mel frames of the last `k` chunks replaced by quiet ones (the room's own floor),
 * the `k` embeddings whose 76-frame windows hold a replaced frame made again, the others kept.
 * This file is the pure part: which frames stand for quiet, and the embedding inputs of a pause.
 */

const MEL_BINS = 32
/** One embedding reads 76 mel frames. */
const EMBEDDING_WINDOW = 76
/** A chunk (80 ms) adds 8 mel frames. */
const CHUNK_FRAMES = 8

/**
 * The quietest chunk's 8 mel frames among the newest whole chunks of `frames` (oldest first,
 * ending on a chunk's end): the one whose frames' mean is lowest (the mel values are log
 * energies). The room's own floor, so a synthesized pause sounds like this room, not like
 * digital silence.
 */
export function quietestChunk(frames: Float32Array): Float32Array {
  const chunkValues = CHUNK_FRAMES * MEL_BINS
  const chunks = Math.floor(frames.length / chunkValues)
  if (chunks === 0) {
    throw new RangeError(
      `synth-pause: ${frames.length} mel values hold no whole chunk (${chunkValues})`,
    )
  }
  let best = frames.length - chunkValues
  let bestSum = Number.POSITIVE_INFINITY
  for (let c = 0; c < chunks; c++) {
    const start = frames.length - (c + 1) * chunkValues
    let sum = 0
    for (let i = start; i < start + chunkValues; i++) sum += frames[i] ?? 0
    if (sum < bestSum) {
      bestSum = sum
      best = start
    }
  }
  return frames.slice(best, best + chunkValues)
}

/**
 * The embedding inputs of a pause after the newest chunk of `frames`: window `j` (1..k) is the
 * 76 frames ending `j` chunks later had those chunks been `quiet` (one chunk's 8 frames, repeated).
 * `frames` are the real mel frames up to the pause, oldest first, at least the 68 the first
 * window keeps. Oldest first; each `[76, 32]`, as the embedding model takes it.
 */
export function pausedWindows(
  frames: Float32Array,
  quiet: Float32Array,
  k: number,
): Float32Array[] {
  const chunkValues = CHUNK_FRAMES * MEL_BINS
  if (quiet.length !== chunkValues) {
    throw new RangeError(
      `synth-pause: the quiet frames are ${quiet.length} values, not one chunk (${chunkValues})`,
    )
  }
  const kept = (EMBEDDING_WINDOW - CHUNK_FRAMES) * MEL_BINS
  if (frames.length < kept || frames.length % MEL_BINS !== 0) {
    throw new RangeError(
      `synth-pause: ${frames.length} mel values are not the ${kept / MEL_BINS} or more whole frames of ${MEL_BINS} bins a pause needs`,
    )
  }
  if (!Number.isInteger(k) || k < 1)
    throw new RangeError(`synth-pause: k must be 1 or more, not ${k}`)
  const windowValues = EMBEDDING_WINDOW * MEL_BINS
  const out: Float32Array[] = []
  for (let j = 1; j <= k; j++) {
    const window = new Float32Array(windowValues)
    const quietFrames = Math.min(j * CHUNK_FRAMES, EMBEDDING_WINDOW)
    const real = (EMBEDDING_WINDOW - quietFrames) * MEL_BINS
    window.set(frames.subarray(frames.length - real), 0)
    for (let at = real; at < windowValues; at += chunkValues) {
      window.set(quiet.subarray(0, Math.min(chunkValues, windowValues - at)), at)
    }
    out.push(window)
  }
  return out
}

/**
 * A head's window of `n` embeddings for a pause `paused.length` chunks long: the real ones
 * before it (`real`: the newest embeddings up to the pause, oldest first, 96 values each) and the
 * pause's own after them.
 */
export function pausedHeadWindow(
  real: Float32Array,
  paused: readonly Float32Array[],
  n: number,
): Float32Array {
  const size = paused[0]?.length ?? 96
  const out = new Float32Array(n * size)
  const keep = Math.max(0, n - paused.length)
  const have = Math.min(keep, real.length / size)
  out.set(real.subarray(real.length - have * size), (keep - have) * size)
  for (const [i, e] of paused.slice(-n).entries()) out.set(e, (keep + i) * size)
  return out
}
