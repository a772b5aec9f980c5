import { createHash } from 'node:crypto'
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { errorText, NocturnError } from '../../core/errors.js'
import { EMBEDDING_SIZE } from './features.js'
import { type LogisticModel, predict } from './logistic.js'

/**
 * The household's own check after a head, openWakeWord's "custom verifier" method: a logistic
 * regression on the same speech embeddings the head reads (its window, e.g. 16 × 96), trained on
 * a few clips of the household saying the phrase and on audio of the room. When the head scores
 * at least `gate` on a chunk, the verifier's probability replaces the head's score there, and the
 * detector's usual threshold and run of chunks apply to it. It learns what *these* voices saying
 * *this* phrase look like to the embedding model — not who is speaking (docs/wake-word.md).
 */
export interface VerifierStage {
  /** Head scores at or above this are handed to the verifier; below it the head's score stands. */
  readonly gate: number
  /** The score that counts, from the head's window of embeddings (`window × 96`, oldest first). */
  score(window: Float32Array, headScore: number): number
  /**
   * What `score` returns, as data the runtime's thread can score with (chain.ts runs there): the
   * logistic model's `predict` on the window. Absent: `score` returns the head's score (a stage
   * that only keeps windows); the thread then hands every window at the gate back to `score`,
   * which keeps it.
   */
  readonly logistic?: LogisticModel | undefined
}

/** What `nocturn wake enroll` measured, kept in the file for doctor. */
export interface EnrolmentSummary {
  readonly at: string
  readonly clips: number
  readonly positiveWindows: number
  readonly negativeWindows: number
  /** Enrolment clips the verifier accepted when trained without them. */
  readonly leaveOneOutAccepted: number
  /** Negative windows above the gate it accepted when trained without them (by folds). */
  readonly negativesAccepted: number
  readonly negativesChecked: number
}

/** The verifier file: small JSON beside the installed models, the household's own. */
export interface VerifierRecord {
  readonly kind: typeof KIND
  readonly version: 1
  readonly phrase: string
  /** The head it was trained behind (file name and SHA-256): another head's verifier is refused. */
  readonly head: string
  readonly headSha256: string
  readonly window: number
  readonly gate: number
  readonly bias: number
  readonly weights: readonly number[]
  readonly enrolment: EnrolmentSummary
  /**
   * Windows of the household's phrase heard in noise at enrolment (`encodeWindows`): a lesson
   * keeps accepting the ones the verifier accepts (docs/wake-word.md, "Teaching it").
   */
  readonly noisy?: string
  /** The household's last lesson from its phones (docs/wake-word.md, "Teaching it"), if any. */
  readonly taught?: {
    readonly at: string
    readonly negatives: number
    readonly positives: number
  }
}

const KIND = 'nocturn-wake-verifier'
/** Upstream's default custom_verifier_threshold. */
export const DEFAULT_VERIFIER_GATE = 0.1

export class WakeVerifier implements VerifierStage {
  readonly gate: number
  readonly record: VerifierRecord
  readonly logistic: LogisticModel

  constructor(record: VerifierRecord) {
    this.record = record
    this.gate = record.gate
    this.logistic = { weights: Float64Array.from(record.weights), bias: record.bias }
  }

  score(window: Float32Array): number {
    return predict(this.logistic, window)
  }
}

export function sha256File(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex')
}

/**
 * Reads and checks a verifier for `headFile` (a head of `window` embeddings). Throws a
 * NocturnError naming the file and the fix when it is unreadable, malformed, or for another head.
 */
export function readVerifier(file: string, headFile: string, window: number): WakeVerifier {
  const fix = `enrol again with \`nocturn wake enroll\`, or delete ${file} to listen without it`
  let record: unknown
  try {
    record = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_INVALID',
      `the wake verifier ${file} cannot be read (${errorText(err)}): ${fix}`,
    )
  }
  const problem = recordProblem(record, window)
  if (problem) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_INVALID',
      `the wake verifier ${file} ${problem}: ${fix}`,
    )
  }
  const r = record as VerifierRecord
  if (r.headSha256 !== sha256File(headFile)) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_INVALID',
      `the wake verifier ${file} was trained behind another head (${r.head}), not ${headFile}: ${fix}`,
    )
  }
  return new WakeVerifier(r)
}

/** Writes a verifier whole or not at all: the one already there stays until the new one is in. */
export function writeVerifier(file: string, record: VerifierRecord): void {
  const tmp = `${file}.${process.pid}.tmp`
  try {
    writeFileSync(tmp, `${JSON.stringify(record)}\n`, { mode: 0o644 })
    renameSync(tmp, file)
  } catch (err) {
    rmSync(tmp, { force: true })
    throw err
  }
}

export function verifierRecord(
  o: Omit<VerifierRecord, 'kind' | 'version' | 'weights' | 'bias'> & { model: LogisticModel },
): VerifierRecord {
  const { model, ...rest } = o
  return {
    kind: KIND,
    version: 1,
    ...rest,
    bias: model.bias,
    weights: Array.from(model.weights, (w) => Number(w.toPrecision(7))),
  }
}

/** Feature windows as one base64 string of little-endian float32s (features, never audio). */
export function encodeWindows(windows: readonly Float32Array[]): string {
  const d = windows[0]?.length ?? 0
  const all = new Float32Array(windows.length * d)
  for (const [i, w] of windows.entries()) all.set(w, i * d)
  return Buffer.from(all.buffer).toString('base64')
}

/** The windows of `encodeWindows`, each `size` floats; none from a string that is not whole ones. */
export function decodeWindows(text: string | undefined, size: number): Float32Array[] {
  if (!text || size <= 0) return []
  const b = Buffer.from(text, 'base64')
  if (b.length % (size * 4) !== 0) return []
  const all = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length))
  const out: Float32Array[] = []
  for (let i = 0; i < all.length; i += size) out.push(all.slice(i, i + size))
  return out
}

function recordProblem(r: unknown, window: number): string | undefined {
  if (typeof r !== 'object' || r === null) return 'is not a JSON object'
  const o = r as Record<string, unknown>
  if (o.kind !== KIND || o.version !== 1)
    return `is not a verifier file (kind "${KIND}", version 1)`
  if (typeof o.head !== 'string' || typeof o.headSha256 !== 'string') return 'names no head'
  if (o.window !== window) {
    return `was trained on ${String(o.window)} embeddings, but the head reads ${window}`
  }
  const w = o.weights
  if (!Array.isArray(w) || w.length !== window * EMBEDDING_SIZE) {
    return `holds ${Array.isArray(w) ? w.length : 'no'} weights, not ${window * EMBEDDING_SIZE}`
  }
  if (!w.every((v) => typeof v === 'number' && Number.isFinite(v)))
    return 'holds a weight that is not a number'
  if (typeof o.bias !== 'number' || !Number.isFinite(o.bias)) return 'has no bias'
  if (typeof o.gate !== 'number' || !(o.gate > 0 && o.gate < 1)) return 'has no gate in (0, 1)'
  return undefined
}
