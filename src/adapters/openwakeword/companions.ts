import { NocturnError } from '../../core/errors.js'
import type { CompanionModel } from './companion.js'
import { EMBEDDING_SIZE } from './features.js'
import heyJarvis from './hey-jarvis-companion.json' with { type: 'json' }

// The companion heads we ship (companion.ts says what one is), and their file. Apart from the
// scoring, so the runtime's thread, which is sent the model and only scores it, never parses the
// weights' 130 kB (~7 ms of its start).

/** The file as the bench writes it: float32 arrays little-endian in base64. */
export interface CompanionRecord {
  readonly kind: 'nocturn-wake-companion'
  readonly version: 1
  /** The pretrained head it stands beside (its file name). */
  readonly head: string
  readonly window: number
  readonly gate: number
  readonly hidden: number
  readonly w1: string
  readonly b1: string
  readonly w2: string
  readonly b2: number
  /** What it was trained on and how it was chosen, for doctor and the docs. */
  readonly trained: Record<string, unknown>
}

function floats(b64: string): Float32Array {
  const b = Buffer.from(b64, 'base64')
  const out = new Float32Array(b.byteLength >> 2)
  for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(i * 4)
  return out
}

/** A record as a model; a record of another shape is refused, naming what is wrong. */
export function companionOf(r: CompanionRecord): CompanionModel {
  const m = {
    window: r.window,
    gate: r.gate,
    hidden: r.hidden,
    w1: floats(r.w1),
    b1: floats(r.b1),
    w2: floats(r.w2),
    b2: r.b2,
  }
  const size = m.window * EMBEDDING_SIZE * m.hidden
  if (
    r.kind !== 'nocturn-wake-companion' ||
    m.w1.length !== size ||
    m.b1.length !== m.hidden ||
    m.w2.length !== m.hidden
  ) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_SHAPE',
      `the ${r.head} companion head is not a ${m.window} × ${EMBEDDING_SIZE} → ${m.hidden} → 1 network: re-make it with bench/wake-companion.bench.ts`,
    )
  }
  return m
}

/** Pretrained heads that have a companion of ours, by their `nocturn wake list` name. */
const COMPANIONS: Record<string, CompanionRecord> = {
  hey_jarvis: heyJarvis as CompanionRecord,
}

/** The companion of pretrained head `name`, if it has one. */
export function companionFor(name: string): CompanionModel | undefined {
  const r = COMPANIONS[name]
  return r ? companionOf(r) : undefined
}
