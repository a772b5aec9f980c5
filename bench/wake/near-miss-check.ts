// The near-miss check as the detector would run it (issue 46; measured, not built in): a logistic
// model on the head's 16 × 96 window, an AND after the pretrained head's and the companion's OR.
// Where the scored window reaches its gate, the score that counts is the smaller of theirs and
// its own (its threshold folded into its bias, so it crosses 0.5 where its probability crosses
// its threshold): a window it refuses cannot reach the threshold, and no wake follows. Here it is
// a verifier stage of the bench's (heads.ts hands it every exact window at its gate, with the
// heads' score), so the chain must score in process: `inProcess` wraps the runtime for that.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LogisticModel } from '../../src/adapters/openwakeword/logistic.js'
import type { InferenceRuntime } from '../../src/adapters/openwakeword/model-session.js'
import { loadRuntime } from '../../src/adapters/openwakeword/runtime.js'
import type { VerifierStage } from '../../src/adapters/openwakeword/verifier.js'

/** Where `train` keeps the check (git-ignored, with the companion bench's cache beside it). */
const NEAR_MISS_FILE = join(
  import.meta.dirname,
  '..',
  '..',
  'var',
  'bench-wake',
  'near-miss',
  'hey-jarvis-near-miss.json',
)

interface NearMissFile {
  readonly gate: number
  readonly threshold: number
  readonly bias: number
  readonly weights: number[]
  readonly trained: Record<string, unknown>
}

export function writeNearMiss(
  m: LogisticModel,
  o: { gate: number; threshold: number; trained: Record<string, unknown> },
): string {
  mkdirSync(join(NEAR_MISS_FILE, '..'), { recursive: true })
  const t = o.threshold
  const r: NearMissFile = {
    gate: o.gate,
    threshold: t,
    // Its own threshold t becomes the head's 0.5: the logit moves by −logit(t).
    bias: m.bias - Math.log(t / (1 - t)),
    weights: Array.from(m.weights, (w) => Number(w.toPrecision(8))),
    trained: o.trained,
  }
  const text = `${JSON.stringify(r)}\n`
  writeFileSync(NEAR_MISS_FILE, text)
  return text
}

/** The check `train` wrote, as the stage the detector asks. */
export function readNearMiss(): NearMissStage {
  if (!existsSync(NEAR_MISS_FILE)) {
    throw new Error(`${NEAR_MISS_FILE} is not there: BENCH_ONLY=train makes it`)
  }
  const r = JSON.parse(readFileSync(NEAR_MISS_FILE, 'utf8')) as NearMissFile
  return new NearMissStage(r.gate, { weights: Float64Array.from(r.weights), bias: r.bias })
}

class NearMissStage implements VerifierStage {
  readonly gate: number
  readonly #m: LogisticModel
  constructor(gate: number, m: LogisticModel) {
    this.gate = gate
    this.#m = m
  }
  score(window: Float32Array, headScore: number): number {
    const w = this.#m.weights
    const from = window.length - w.length
    let z = this.#m.bias
    for (let i = 0; i < w.length; i++) z += (w[i] ?? 0) * (window[from + i] ?? 0)
    return Math.min(headScore, 1 / (1 + Math.exp(-z)))
  }
}

/** The native runtime with no chain of its own: the detector scores in process (each model run one hand-off). */
export async function inProcess(): Promise<InferenceRuntime> {
  const r = await loadRuntime('native')
  return { name: r.name, load: (file) => r.load(file) }
}
