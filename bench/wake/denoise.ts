// A denoiser in front of the wake word, tried (issue 22): `BENCH_ONLY=denoise npm run bench --
// wake-word`; `WAKE_BENCH_DENOISERS=rnnoise,spectral-15` is the default, `spectral-<dB>` being
// wiener.ts with that floor. Not in the product: it asks whether a denoiser ahead of the detector
// lowers the head's misses in noise without raising its false wakes. Scored by the real detector,
// head alone (no verifier):
//  - missed wakes, "hey jarvis" and "alexa" from every voice at four speeds, clean and in noise,
//    at thresholds 0.2, 0.3 and 0.5 (two chunks in a row), raw against each denoiser;
//  - false wakes on the local run's non-wake stream, clean and over music and pink noise at 10 dB;
//  - and what each denoiser alone costs per second of audio.
// For RNNoise the audio is taken to 48 kHz (its rate, 480-sample frames) by zero-stuffing and a
// windowed-sinc low-pass, denoised, and brought back to 16 kHz through the same filter; long
// audio goes in 10 s blocks with one RNNoise state, the filter restarting per block.
import createRnnoise from '@echogarden/rnnoise-wasm'
import { HEADS, pinnedDetector } from '../../test/helpers/wake.js'
import {
  bed,
  bytes,
  concat,
  mix,
  mixUnder,
  noiseConditions,
  nonWakeStream,
  utterance,
  voices,
  WAKE_PHRASES,
} from './corpus.js'
import { SpectralSuppressor } from './wiener.js'

interface Rnnoise {
  HEAPF32: Float32Array
  _rnnoise_create(model: number): number
  _rnnoise_destroy(st: number): void
  _rnnoise_get_frame_size(): number
  _rnnoise_process_frame(st: number, out: number, inp: number): number
  _malloc(bytes: number): number
  _free(ptr: number): void
}

const RATE = 16_000
const BLOCK = 10 * RATE

/** A Blackman-windowed sinc low-pass, `cutoff` a fraction of the sample rate, unit gain. */
function lowPass(taps: number, cutoff: number): Float32Array {
  const h = new Float32Array(taps)
  const mid = (taps - 1) / 2
  let sum = 0
  for (let i = 0; i < taps; i++) {
    const x = i - mid
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x)
    const w =
      0.42 -
      0.5 * Math.cos((2 * Math.PI * i) / (taps - 1)) +
      0.08 * Math.cos((4 * Math.PI * i) / (taps - 1))
    h[i] = sinc * w
    sum += sinc * w
  }
  return h.map((v) => v / sum)
}

const LP = lowPass(97, 7600 / 48_000)

function filterAt(x: Float32Array, n: number): number {
  const mid = (LP.length - 1) / 2
  let acc = 0
  for (let k = 0; k < LP.length; k++) {
    const j = n - k + mid
    if (j >= 0 && j < x.length) acc += (LP[k] ?? 0) * (x[j] ?? 0)
  }
  return acc
}

class Denoiser {
  readonly #m: Rnnoise
  readonly #st: number
  readonly #frame: number
  readonly #in: number
  readonly #out: number

  constructor(m: Rnnoise) {
    this.#m = m
    this.#st = m._rnnoise_create(0)
    this.#frame = m._rnnoise_get_frame_size()
    this.#in = m._malloc(this.#frame * 4)
    this.#out = m._malloc(this.#frame * 4)
  }

  run(x: Int16Array): Int16Array {
    const y = new Int16Array(x.length)
    for (let b = 0; b < x.length; b += BLOCK) y.set(this.#block(x.subarray(b, b + BLOCK)), b)
    return y
  }

  #block(x: Int16Array): Int16Array {
    const stuffed = new Float32Array(x.length * 3)
    for (let i = 0; i < x.length; i++) stuffed[i * 3] = (x[i] ?? 0) * 3
    const up = new Float32Array(stuffed.length)
    for (let n = 0; n < up.length; n++) up[n] = filterAt(stuffed, n)
    const clean = new Float32Array(up.length)
    const f = this.#frame
    for (let i = 0; i + f <= up.length; i += f) {
      this.#m.HEAPF32.set(up.subarray(i, i + f), this.#in / 4)
      this.#m._rnnoise_process_frame(this.#st, this.#out, this.#in)
      clean.set(this.#m.HEAPF32.subarray(this.#out / 4, this.#out / 4 + f), i)
    }
    const y = new Int16Array(x.length)
    for (let i = 0; i < y.length; i++)
      y[i] = Math.max(-32768, Math.min(32767, Math.round(filterAt(clean, i * 3))))
    return y
  }

  /** CPU of RNNoise alone, per second of audio, on `seconds` of one repeated noisy frame. */
  cost(seconds: number): number {
    const f = this.#frame
    this.#m.HEAPF32.set(
      Float32Array.from({ length: f }, (_, i) => Math.sin(i) * 2000),
      this.#in / 4,
    )
    const before = process.cpuUsage()
    for (let i = 0; i < (seconds * 48_000) / f; i++)
      this.#m._rnnoise_process_frame(this.#st, this.#out, this.#in)
    const used = process.cpuUsage(before)
    return (used.user + used.system) / 1000 / seconds
  }

  close(): void {
    this.#m._free(this.#in)
    this.#m._free(this.#out)
    this.#m._rnnoise_destroy(this.#st)
  }
}

/** Wakes the detector's rule gives on recorded per-chunk scores, any head (2 s refractory). */
function replay(scores: readonly Float32Array[], threshold: number, consecutive: number): number {
  const above = scores.map(() => 0)
  let count = 0
  let quietUntil = -1
  for (let c = 0; c < (scores[0]?.length ?? 0); c++) {
    let fired = false
    scores.forEach((s, i) => {
      above[i] = (s[c] ?? 0) >= threshold ? (above[i] ?? 0) + 1 : 0
      if ((above[i] ?? 0) >= consecutive) fired = true
    })
    if (fired && c >= quietUntil) {
      count++
      quietUntil = c + 25
      above.fill(0)
    }
  }
  return count
}

async function scoresOf(pcm: Int16Array): Promise<Float32Array[]> {
  const scores = HEADS.map(() => new Float32Array(Math.ceil(pcm.length / 1280) + 1))
  let c = 0
  const d = await pinnedDetector({
    onWake: () => {},
    phrases: HEADS.map((h) => ({ phrase: h.name, file: h.file, threshold: 0.5 })),
    onScores: (s) => {
      s.forEach((v, i) => {
        const a = scores[i]
        if (a) a[c] = v
      })
      c++
    },
  })
  await d.scoreRecorded(bytes(pcm))
  await d.close()
  return scores.map((s) => s.subarray(0, c))
}

const THRESHOLDS = [0.2, 0.3, 0.5]

/** A denoiser of the trial: a fresh one per clip and per stream, as a device would start one. */
interface Trial {
  readonly name: string
  run(x: Int16Array): Int16Array
}

/** `WAKE_BENCH_DENOISERS`: `rnnoise` and/or `spectral<floor dB>` (e.g. `spectral-15`). */
async function trials(names: readonly string[], out: (line: string) => void): Promise<Trial[]> {
  const list: Trial[] = []
  for (const name of names) {
    if (name === 'rnnoise') {
      const m = (await createRnnoise()) as Rnnoise
      const probe = new Denoiser(m)
      const costs = [0, 1, 2].map(() => probe.cost(60).toFixed(1))
      probe.close()
      out(
        `\nRNNoise (WASM) alone, 60 s of 48 kHz frames, three runs: ${costs.join(', ')} ms CPU per audio second`,
      )
      list.push({
        name,
        run: (x) => {
          const dn = new Denoiser(m)
          const y = dn.run(x)
          dn.close()
          return y
        },
      })
      continue
    }
    const floor = /^spectral(-\d+)$/.exec(name)?.[1]
    if (floor === undefined)
      throw new Error(`WAKE_BENCH_DENOISERS: "${name}" is neither rnnoise nor spectral-<dB>`)
    const db = Number(floor)
    const costs = [0, 1, 2].map(() => SpectralSuppressor.cost(60, db).toFixed(1))
    out(`\n${name} alone, 60 s at 16 kHz, three runs: ${costs.join(', ')} ms CPU per audio second`)
    list.push({ name, run: (x) => new SpectralSuppressor(db).run(x) })
  }
  return list
}

export async function denoiseBench(out: (line: string) => void): Promise<void> {
  const dns = await trials(
    (process.env.WAKE_BENCH_DENOISERS ?? 'rnnoise,spectral-15').split(','),
    out,
  )
  const names = dns.map((d) => d.name)
  const vs = voices([130, 150, 170, 190])
  const conditions = noiseConditions()
  const clips = WAKE_PHRASES.flatMap((p) =>
    vs.map((v) => ({ head: p.head, pcm: utterance(v, p.text, `wake-${p.head}-${v.name}`) })),
  )
  out(
    `\nA denoiser ahead of the head: missed of ${clips.length} wake clips at ${THRESHOLDS.join(' / ')}`,
  )
  out(`| condition | raw | ${names.join(' | ')} |`)
  out(`|---|---|${names.map(() => '---|').join('')}`)
  for (const [name, noise, snr] of conditions) {
    const missed = [THRESHOLDS.map(() => 0), ...dns.map(() => THRESHOLDS.map(() => 0))]
    for (const [ci, clip] of clips.entries()) {
      const padded = concat([new Int16Array(RATE), clip.pcm, new Int16Array(RATE)])
      const heard = noise
        ? mixUnder(padded, clip.pcm, noise, snr, (ci * 7919) % noise.length)
        : padded
      const variants = [heard, ...dns.map((d) => d.run(heard))]
      const h = HEADS.findIndex((x) => x.name === clip.head)
      for (const [k, pcm] of variants.entries()) {
        const s = (await scoresOf(pcm))[h] ?? new Float32Array()
        let held = 0
        for (let c = 1; c < s.length; c++) held = Math.max(held, Math.min(s[c - 1] ?? 0, s[c] ?? 0))
        THRESHOLDS.forEach((th, j) => {
          const row = missed[k]
          if (row && held < th) row[j] = (row[j] ?? 0) + 1
        })
      }
    }
    out(`| ${name} | ${missed.map((r) => r.join(' / ')).join(' | ')} |`)
  }

  const { stream: clean } = nonWakeStream(voices())
  const half = Math.floor(clean.length / 2)
  const noisy = concat([
    mix(clean.subarray(0, half), bed('music', 60), 10),
    mix(clean.subarray(half), bed('pink', 60), 10, 12_345),
  ])
  out(
    `\nA denoiser ahead of the head: false wakes (count) at ${THRESHOLDS.join(' / ')}, two chunks`,
  )
  out(`| stream | minutes | raw | ${names.join(' | ')} |`)
  out(`|---|---|---|${names.map(() => '---|').join('')}`)
  for (const [name, stream] of [
    ['clean', clean],
    ['over music and pink noise, 10 dB', noisy],
  ] as const) {
    const counts = await Promise.all(
      [stream, ...dns.map((d) => d.run(stream))].map(async (pcm) => {
        const s = await scoresOf(pcm)
        return THRESHOLDS.map((th) => replay(s, th, 2)).join(' / ')
      }),
    )
    out(`| ${name} | ${(stream.length / RATE / 60).toFixed(1)} | ${counts.join(' | ')} |`)
  }
}
