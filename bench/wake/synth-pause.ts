/**
 * A pause the speaker did not make (issue 46): "hey jarvis what time is it" said in one breath
 * scores lower than the phrase followed by a pause, since the head learnt the phrase followed by
 * silence or noise and the command's first frames enter the newest embedding windows before the
 * score has risen. So near a threshold the detector can also score the window "as if the speaker
 * had paused": the mel frames of the last `k` chunks replaced by quiet ones (the room's own floor),
 * the `k` embeddings whose 76-frame windows hold a replaced frame made again, the others kept.
 * This file is the pure part: which frames stand for quiet, and the embedding inputs of a pause.
 * Bench code only: measured, it did not earn a place in the detector (bench/RESULTS.md, "a
 * synthesized pause"); it is written so it could move to src/adapters/openwakeword/ unchanged.
 */

const MEL_BINS = 32
/** One embedding reads 76 mel frames. */
const EMBEDDING_WINDOW = 76
/** A chunk (80 ms) adds 8 mel frames. */
const CHUNK_FRAMES = 8

/**
 * The `n` quietest chunks' mel frames among the newest whole chunks of `frames` (oldest first,
 * ending on a chunk's end), kept in their order: the chunks whose frames' mean is lowest (the
 * mel values are log energies). The room's own floor, so a synthesized pause sounds like this
 * room, not like digital silence; several chunks, so its noise varies as a room's does.
 */
export function quietestChunks(frames: Float32Array, n = 1): Float32Array {
  const chunkValues = CHUNK_FRAMES * MEL_BINS
  const chunks = Math.floor(frames.length / chunkValues)
  if (chunks === 0) {
    throw new RangeError(
      `synth-pause: ${frames.length} mel values hold no whole chunk (${chunkValues})`,
    )
  }
  const start = frames.length - chunks * chunkValues
  const sums = Array.from({ length: chunks }, (_, c) => {
    let sum = 0
    const from = start + c * chunkValues
    for (let i = from; i < from + chunkValues; i++) sum += frames[i] ?? 0
    return { c, sum }
  })
  const picked = sums
    .sort((x, y) => x.sum - y.sum || y.c - x.c)
    .slice(0, Math.max(1, n))
    .sort((x, y) => x.c - y.c)
  const out = new Float32Array(picked.length * chunkValues)
  for (const [i, { c }] of picked.entries()) {
    const from = start + c * chunkValues
    out.set(frames.subarray(from, from + chunkValues), i * chunkValues)
  }
  return out
}

/**
 * The embedding inputs of a pause after the newest chunk of `frames`: window `j` (1..k) is the
 * 76 frames ending `j` chunks later had those chunks been `quiet` (whole chunks of 8 frames, in
 * turn and again from the first as the pause runs longer). `frames` are the real mel frames up
 * to the pause, oldest first, at least the 68 the first window keeps. Oldest first; each
 * `[76, 32]`, as the embedding model takes it.
 */
export function pausedWindows(
  frames: Float32Array,
  quiet: Float32Array,
  k: number,
): Float32Array[] {
  const chunkValues = CHUNK_FRAMES * MEL_BINS
  if (quiet.length === 0 || quiet.length % chunkValues !== 0) {
    throw new RangeError(
      `synth-pause: the quiet frames are ${quiet.length} values, not whole chunks (${chunkValues} each)`,
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
    const quietValues = Math.min(j * CHUNK_FRAMES, EMBEDDING_WINDOW) * MEL_BINS
    const real = windowValues - quietValues
    window.set(frames.subarray(frames.length - real), 0)
    // The pause's first frame is the quiet's first; a window that starts inside the pause
    // starts as far into it.
    const skip = j * chunkValues - quietValues
    for (let v = 0; v < quietValues; v++) window[real + v] = quiet[(skip + v) % quiet.length] ?? 0
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
