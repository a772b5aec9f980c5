// A cheap stationary-noise suppressor, for the denoise trial only (issue 22): what speexdsp's
// suppressor does in kind, at 16 kHz with no resampling. 32 ms frames every 16 ms under a
// square-root Hann window (analysis and synthesis, so overlap-add gives the input back when the
// gain is 1); the noise's power per bin is the minimum of the smoothed power over the last ~1.5 s
// (minimum statistics, a fixed bias); the gain is Wiener's, on a decision-directed a-priori SNR,
// never below a floor so speech is not hollowed out. The FFT is a plain radix-2 one.

const N = 512
const HOP = N / 2
const BINS = N / 2 + 1
/** 8 sub-windows of 12 frames: the minimum is taken over the last 96 frames, 1.5 s. */
const SUB = 12
const SUBS = 8
/** The minimum of a smoothed noise power sits under its mean by about this much. */
const MIN_BIAS = 1.6
/** Decision-directed smoothing (Ephraim and Malah's 0.98). */
const DD = 0.98

const WINDOW = Float32Array.from({ length: N }, (_, i) =>
  Math.sqrt(0.5 - 0.5 * Math.cos((2 * Math.PI * i) / N)),
)

const LOG2N = Math.log2(N)
const REV = Uint16Array.from({ length: N }, (_, i) => {
  let r = 0
  for (let b = 0; b < LOG2N; b++) r |= ((i >> b) & 1) << (LOG2N - 1 - b)
  return r
})
const COS = Float64Array.from({ length: N / 2 }, (_, i) => Math.cos((2 * Math.PI * i) / N))
const SIN = Float64Array.from({ length: N / 2 }, (_, i) => Math.sin((2 * Math.PI * i) / N))

/** In place; `inverse` conjugates the twiddles and leaves the 1/N to the caller. */
function fft(re: Float64Array, im: Float64Array, inverse: boolean): void {
  for (let i = 0; i < N; i++) {
    const j = REV[i] ?? 0
    if (j > i) {
      const tr = re[i] ?? 0
      re[i] = re[j] ?? 0
      re[j] = tr
      const ti = im[i] ?? 0
      im[i] = im[j] ?? 0
      im[j] = ti
    }
  }
  const sign = inverse ? 1 : -1
  for (let size = 2; size <= N; size *= 2) {
    const half = size / 2
    const step = N / size
    for (let start = 0; start < N; start += size) {
      for (let k = 0; k < half; k++) {
        const wr = COS[k * step] ?? 0
        const wi = sign * (SIN[k * step] ?? 0)
        const a = start + k
        const b = a + half
        const br = re[b] ?? 0
        const bi = im[b] ?? 0
        const xr = br * wr - bi * wi
        const xi = br * wi + bi * wr
        re[b] = (re[a] ?? 0) - xr
        im[b] = (im[a] ?? 0) - xi
        re[a] = (re[a] ?? 0) + xr
        im[a] = (im[a] ?? 0) + xi
      }
    }
  }
}

export class SpectralSuppressor {
  readonly #floor: number
  readonly #smoothed = new Float64Array(BINS)
  readonly #subMin: Float64Array[] = Array.from({ length: SUBS }, () =>
    new Float64Array(BINS).fill(Number.POSITIVE_INFINITY),
  )
  readonly #current = new Float64Array(BINS).fill(Number.POSITIVE_INFINITY)
  readonly #lastClean = new Float64Array(BINS)
  #frames = 0

  /** `floorDb`: the deepest cut, e.g. −12 (speexdsp's default is −15). */
  constructor(floorDb: number) {
    this.#floor = 10 ** (floorDb / 20)
  }

  run(x: Int16Array): Int16Array {
    const y = new Float64Array(x.length + 2 * N)
    const re = new Float64Array(N)
    const im = new Float64Array(N)
    // Frames start half a frame early, so every sample is under two of them.
    for (let s = -HOP; s < x.length; s += HOP) {
      for (let i = 0; i < N; i++) {
        re[i] = (x[s + i] ?? 0) * (WINDOW[i] ?? 0)
        im[i] = 0
      }
      fft(re, im, false)
      this.#gain(re, im)
      fft(re, im, true)
      for (let i = 0; i < N; i++)
        y[s + HOP + i] = (y[s + HOP + i] ?? 0) + ((re[i] ?? 0) / N) * (WINDOW[i] ?? 0)
    }
    return Int16Array.from(x, (_, i) =>
      Math.max(-32768, Math.min(32767, Math.round(y[i + HOP] ?? 0))),
    )
  }

  #gain(re: Float64Array, im: Float64Array): void {
    const first = this.#frames === 0
    const slot = Math.floor(this.#frames / SUB) % SUBS
    if (this.#frames % SUB === 0 && !first) {
      this.#subMin[(slot + SUBS - 1) % SUBS]?.set(this.#current)
      this.#current.fill(Number.POSITIVE_INFINITY)
    }
    this.#frames++
    for (let k = 0; k < BINS; k++) {
      const p = (re[k] ?? 0) ** 2 + (im[k] ?? 0) ** 2
      const sm = first ? p : 0.7 * (this.#smoothed[k] ?? 0) + 0.3 * p
      this.#smoothed[k] = sm
      if (sm < (this.#current[k] ?? 0)) this.#current[k] = sm
      let min = this.#current[k] ?? 0
      for (const m of this.#subMin) if ((m[k] ?? 0) < min) min = m[k] ?? 0
      const noise = Math.max(1, min * MIN_BIAS)
      const post = p / noise
      const prior = first
        ? Math.max(post - 1, 0)
        : DD * ((this.#lastClean[k] ?? 0) / noise) + (1 - DD) * Math.max(post - 1, 0)
      const g = Math.max(this.#floor, prior / (1 + prior))
      this.#lastClean[k] = g * g * p
      re[k] = (re[k] ?? 0) * g
      im[k] = (im[k] ?? 0) * g
      if (k > 0 && k < N / 2) {
        re[N - k] = (re[N - k] ?? 0) * g
        im[N - k] = (im[N - k] ?? 0) * g
      }
    }
  }

  /** CPU per second of audio, on `seconds` of noise. */
  static cost(seconds: number, floorDb: number): number {
    const x = Int16Array.from({ length: seconds * 16_000 }, (_, i) => Math.sin(i * 0.37) * 2000)
    const before = process.cpuUsage()
    new SpectralSuppressor(floorDb).run(x)
    const used = process.cpuUsage(before)
    return (used.user + used.system) / 1000 / seconds
  }
}
