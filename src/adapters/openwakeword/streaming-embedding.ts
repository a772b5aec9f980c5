import { type OnnxNode, parseOnnx, subModel } from './onnx-graph.js'

/**
 * openWakeWord's embedding model, run so that a window overlapping the one before costs only its
 * new frames (docs/wake-word.md, "The embedding model, streamed").
 *
 * The model is convolutional along time with no padding there (its convolutions pad the mel axis
 * only) and pools time by 2 three times: each of its outputs depends on its own 76 frames alone.
 * The graph is cut after its first two time-pooling layers into three parts, and the activations
 * of the first two are kept: when a window is the last one moved on by m steps of 4 frames (the
 * first two parts' strides; a chunk is 2 steps) — its first frames are the last one's later
 * frames, compared value by value — the first part runs on the new 4·m frames and its context
 * only, the second on its new rows and their context, the third (a seventh of the arithmetic) on
 * its whole input. The same arithmetic on the same values: the same embedding. Any other window
 * (a start, a reset, a jump back) runs through all three parts whole.
 */

/** Runs one part of the model on a float tensor; gives its output and shape. */
export type Stage = (
  input: Float32Array,
  dims: readonly number[],
) => Promise<{ data: Float32Array; dims: readonly number[] }>

/** The three parts' model bytes, and how many rows of context the first two need. */
export interface EmbeddingParts {
  readonly bytes: readonly [Uint8Array, Uint8Array, Uint8Array]
  /** Time rows each of the first two parts loses to its unpadded convolutions. */
  readonly context: readonly [number, number]
}

/**
 * The step (in frames) a window may move on by and reuse the kept activations: the product of the
 * first two parts' time strides (2 × 2), so half a chunk. The third part runs whole, so its own
 * stride does not matter, and a hop finer than a chunk streams too.
 */
const STEP = 4
/** How many steps (4 chunks) a window may move on by and still reuse them. */
const MAX_STEPS = 8
/**
 * Runs of windows kept apart, each with its own activations: the detector's chunks and, near a
 * threshold, its second phase (windows 40 ms off, from mel frames of their own) alternate, and
 * with one kept run each window would follow the other phase's and run whole.
 */
const KEPT_RUNS = 2

/**
 * Cuts the embedding model into its three parts; throws (the caller then runs it whole) when its
 * graph is not the shape this relies on.
 */
export function embeddingParts(model: Uint8Array): EmbeddingParts {
  const m = parseOnnx(model)
  const [reshape] = m.nodes
  const input = m.inputs[0]
  const output = m.outputs[0]
  if (reshape?.opType !== 'Reshape' || reshape.inputs[0] !== input || !output) {
    throw new Error('the graph does not start by reshaping its one input')
  }
  const pools = m.nodes.flatMap((n, i) => (timeStride(n) === 2 ? [i] : []))
  const [first, second, third] = pools
  if (pools.length !== 3 || first === undefined || second === undefined || third === undefined) {
    throw new Error(`the graph pools time by 2 ${pools.length} times, not 3`)
  }
  const parts = [m.nodes.slice(1, first + 1), m.nodes.slice(first + 1, second + 1)] as const
  const rest = m.nodes.slice(second + 1)
  for (const n of [...parts[0], ...parts[1]]) checkStreamable(n)
  const names = [
    reshape.outputs[0] ?? '',
    parts[0].at(-1)?.outputs[0] ?? '',
    parts[1].at(-1)?.outputs[0] ?? '',
  ]
  return {
    bytes: [
      subModel(m, parts[0], names[0] ?? '', names[1] ?? ''),
      subModel(m, parts[1], names[1] ?? '', names[2] ?? ''),
      subModel(m, rest, names[2] ?? '', output),
    ],
    context: [context(parts[0]), context(parts[1])],
  }
}

/**
 * One window ([1, 76, bins, 1], or several as a batch) at a time through the three parts, the
 * first two parts' activations kept for the next window. While `streaming()` is false every
 * window runs through all three parts whole (the whole model's arithmetic), its activations still
 * kept, so the first window after the switch can already move on.
 */
export function streamingEmbedding(
  parts: Pick<EmbeddingParts, 'context'>,
  stages: readonly [Stage, Stage, Stage],
  streaming: () => boolean = () => true,
): (input: Float32Array, dims: readonly number[]) => Promise<Float32Array> {
  const [c1, c2] = parts.context
  /** The kept runs, the latest used first: each its last window and its parts' activations. */
  const runs: { last: Float32Array | undefined; kept: [Kept, Kept] }[] = []

  const whole = async (
    window: Float32Array,
    frames: number,
    bins: number,
  ): Promise<[Kept, Kept]> => {
    const a = await stages[0](window, [1, 1, frames, bins])
    const b = await stages[1](a.data, a.dims)
    return [kept4(a), kept4(b)]
  }

  const moved = async (
    window: Float32Array,
    [frames, bins]: readonly [number, number],
    [a, b]: [Kept, Kept],
    m: number,
  ) => {
    // The first part: the newest STEP·m frames and the rows of context before them.
    const take = STEP * m + c1
    const na = await stages[0](window.slice((frames - take) * bins), [1, 1, take, bins])
    shiftIn(a, na)
    // The second: its newest rows (STEP·m / 2 of the first part's) and their context.
    const rows = (STEP * m) / 2 + c2
    const nb = await stages[1](tail(a, rows), [1, a.channels, rows, a.width])
    shiftIn(b, nb)
  }

  const one = async (window: Float32Array, frames: number, bins: number): Promise<Float32Array> => {
    let at = -1
    let m = 0
    if (streaming()) {
      for (let i = 0; i < runs.length && m === 0; i++) {
        const last = runs[i]?.last
        m = last ? shiftOf(last, window, bins) : 0
        if (m > 0) at = i
      }
    }
    let run = at >= 0 ? runs.splice(at, 1)[0] : undefined
    if (run && m > 0) {
      // Forgotten until this window's parts have run: a part that fails leaves nothing half moved.
      run.last = undefined
      await moved(window, [frames, bins], run.kept, m)
    } else {
      run = { last: undefined, kept: await whole(window, frames, bins) }
      if (runs.length >= KEPT_RUNS) runs.pop()
    }
    run.last = window
    runs.unshift(run)
    const b = run.kept[1]
    return (await stages[2](b.data, [1, b.channels, b.rows, b.width])).data
  }

  return async (input, dims) => {
    // [batch, 76 frames, bins, 1], as the whole model takes it.
    const [batch = 1, frames = 0, bins = 0] = dims
    const size = frames * bins
    const outs: Float32Array[] = []
    for (let i = 0; i < batch; i++)
      outs.push(await one(input.slice(i * size, (i + 1) * size), frames, bins))
    if (outs.length === 1 && outs[0]) return outs[0]
    const size1 = outs[0]?.length ?? 0
    const out = new Float32Array(batch * size1)
    for (const [i, o] of outs.entries()) out.set(o, i * size1)
    return out
  }
}

/** A part's output kept: [1, channels, rows, width], row-major per channel. */
interface Kept {
  readonly data: Float32Array
  readonly channels: number
  readonly rows: number
  readonly width: number
}

function kept4(t: { data: Float32Array; dims: readonly number[] }): Kept {
  const [, channels = 0, rows = 0, width = 0] = t.dims
  return { data: t.data.slice(), channels, rows, width }
}

/** Drops the oldest rows of every channel and appends `fresh`'s (the same channels and width). */
function shiftIn(k: Kept, fresh: { data: Float32Array; dims: readonly number[] }): void {
  const n = fresh.dims[2] ?? 0
  const plane = k.rows * k.width
  const add = n * k.width
  for (let c = 0; c < k.channels; c++) {
    const at = c * plane
    k.data.copyWithin(at, at + add, at + plane)
    k.data.set(fresh.data.subarray(c * add, (c + 1) * add), at + plane - add)
  }
}

/** The newest `rows` rows of every channel, as one tensor. */
function tail(k: Kept, rows: number): Float32Array {
  const plane = k.rows * k.width
  const take = rows * k.width
  const out = new Float32Array(k.channels * take)
  for (let c = 0; c < k.channels; c++) {
    out.set(k.data.subarray((c + 1) * plane - take, (c + 1) * plane), c * take)
  }
  return out
}

/** By how many steps `window` moved on from `last` (its start is `last`'s later frames), or 0. */
function shiftOf(last: Float32Array, window: Float32Array, bins: number): number {
  if (last.length !== window.length) return 0
  for (let m = 1; m <= MAX_STEPS; m++) {
    const skip = STEP * m * bins
    if (skip >= window.length) return 0
    let same = true
    for (let i = 0; i + skip < window.length && same; i++) same = window[i] === last[i + skip]
    if (same) return m
  }
  return 0
}

function timeStride(n: OnnxNode): number {
  return n.opType === 'MaxPool' ? (n.ints.get('strides')?.[0] ?? 1) : 1
}

/** Rows of time a part's unpadded convolutions use up (a kernel of k rows: k − 1). */
function context(nodes: readonly OnnxNode[]): number {
  return nodes
    .filter((n) => n.opType === 'Conv')
    .reduce((sum, n) => sum + (n.ints.get('kernel_shape')?.[0] ?? 1) - 1, 0)
}

/** Every convolution and pool before the last part keeps time aligned: no padding, stride 1. */
function checkStreamable(n: OnnxNode): void {
  if (n.opType !== 'Conv' && n.opType !== 'MaxPool') return
  const pads = n.ints.get('pads') ?? [0, 0, 0, 0]
  const stride = n.ints.get('strides')?.[0] ?? 1
  const kernel = n.ints.get('kernel_shape')?.[0] ?? 1
  const pooled = n.opType === 'MaxPool' && stride === 2 && kernel === 2
  if (
    pads[0] !== 0 ||
    pads[2] !== 0 ||
    (stride !== 1 && !pooled) ||
    (n.opType === 'MaxPool' && !pooled && kernel !== 1)
  ) {
    throw new Error(`${n.opType} ${n.outputs[0] ?? ''} pads or strides time`)
  }
}

/**
 * Where the check's windows start, in steps of 4 frames: moved on by half a chunk, one, two and
 * four, a jump back, half a chunk again — every path once.
 */
const CHECK_OFFSETS = [0, 1, 3, 7, 15, 2, 3]

/**
 * Whether the streamed run gives what the parts give run whole on windows that take every path
 * (moved on by half a chunk, 1, 2 and 4 chunks, a jump back): within a millionth of the largest
 * value (the same arithmetic gives the same bits here; the margin is for a runtime that orders a
 * sum otherwise). Otherwise the caller keeps running the parts whole. The parts in a row are
 * the graph itself (a node that read a tensor of an earlier part would not load), so this checks
 * what the cut cannot: the context and alignment each move relies on.
 */
export async function checkedStreaming(
  parts: Pick<EmbeddingParts, 'context'>,
  stages: readonly [Stage, Stage, Stage],
  [frames, bins]: readonly [number, number],
): Promise<boolean> {
  const run = streamingEmbedding(parts, stages)
  const seq = new Float32Array((frames + STEP * Math.max(...CHECK_OFFSETS)) * bins)
  for (let i = 0; i < seq.length; i++)
    seq[i] = 2 + Math.sin(i * 0.013) * 1.5 + Math.sin(i * 0.71) / 2
  const dims = [1, frames, bins, 1]
  let largest = 0
  let worst = 0
  for (const k of CHECK_OFFSETS) {
    const window = seq.slice(k * STEP * bins, (k * STEP + frames) * bins)
    const a = await run(window, dims)
    // A fresh run has nothing kept: every part runs whole.
    const b = await streamingEmbedding(parts, stages)(window, dims)
    if (a.length !== b.length) return false
    for (let i = 0; i < b.length; i++) {
      largest = Math.max(largest, Math.abs(b[i] ?? 0))
      worst = Math.max(worst, Math.abs((a[i] ?? 0) - (b[i] ?? 0)))
    }
  }
  return worst <= largest * 1e-6
}

type Run = (input: Float32Array, dims: readonly number[]) => Promise<Float32Array>

/** How the embedding model runs once its streamed run was tried (`stream`). */
export type EmbeddingMode = 'streamed' | 'whole' | 'closed'

/**
 * The embedding model's three parts, run whole over every window (the whole model's arithmetic:
 * the same embeddings) until `stream()` has checked their streamed run (`checkedStreaming`) and
 * switched to it. The check is then off the path to listening (issue 47), and no session of the
 * whole model is needed: the parts listen from the start. `close` waits for a check under way,
 * then frees the parts (`free`).
 */
export function switchingEmbedding(
  parts: Pick<EmbeddingParts, 'context'>,
  stages: readonly [Stage, Stage, Stage],
  window: readonly [number, number],
  free: () => Promise<void>,
): {
  readonly run: Run
  readonly streamed: boolean
  stream(): Promise<EmbeddingMode>
  close(): Promise<void>
} {
  let on = false
  let closed = false
  let tried: Promise<EmbeddingMode> | undefined
  const check = async (): Promise<EmbeddingMode> => {
    const ok = closed ? false : await checkedStreaming(parts, stages, window).catch(() => false)
    if (closed) return 'closed'
    on = ok
    return ok ? 'streamed' : 'whole'
  }
  return {
    run: streamingEmbedding(parts, stages, () => on),
    get streamed() {
      return on
    },
    stream() {
      tried ??= check()
      return tried
    },
    async close() {
      closed = true
      await tried
      await free()
    },
  }
}
