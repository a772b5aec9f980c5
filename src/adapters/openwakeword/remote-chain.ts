import { type ChainEvent, type ChainHead, ScoringChain } from './chain.js'
import type { CompanionModel } from './companion.js'
import { FeaturePipeline, noisePrefill } from './features.js'
import { type LogisticModel, predict } from './logistic.js'
import type { ModelSession } from './model-session.js'
import type { VerifierStage } from './verifier.js'

/** A verifier as the runtime's thread scores it: its gate and its model (none: pass-through). */
export interface VerifierSnapshot {
  readonly gate: number
  readonly logistic: LogisticModel | undefined
}

/** The chain's options as sent to the runtime's thread: sessions by their number there. */
export interface ChainSpec {
  readonly mel: number
  readonly embedding: number
  readonly heads: readonly {
    readonly session: number
    readonly phrase: string
    readonly threshold: number
    readonly verifier: VerifierSnapshot | undefined
    readonly companion: CompanionModel | undefined
  }[]
  /** How far back the noise prefill reaches (`noisePrefill`). */
  readonly reach: number
  readonly consecutive: number
  readonly refractoryMs: number
  readonly coarseHop: number | undefined
}

/** What the thread scores with for `v` now (a household's lesson changes it). */
export function snapshotOf(v: VerifierStage | undefined): VerifierSnapshot | undefined {
  return v ? { gate: v.gate, logistic: v.logistic } : undefined
}

/** Whether the thread's copy of a verifier is still `v`'s (the same model object, the same gate). */
export function sameSnapshot(a: VerifierSnapshot | undefined, v: VerifierStage | undefined) {
  return a === undefined
    ? v === undefined
    : v !== undefined && a.gate === v.gate && a.logistic === v.logistic
}

/**
 * A verifier on the runtime's thread: it scores as the household's stage does (its logistic model,
 * or the head's score), and hands the window back as an event, for the stage on the event loop to
 * keep (household-stage.ts: the windows of a wake, of a "missed me").
 */
class ThreadVerifier implements VerifierStage {
  readonly #head: number
  readonly #events: ChainEvent[]
  #now: VerifierSnapshot

  constructor(head: number, now: VerifierSnapshot, events: ChainEvent[]) {
    this.#head = head
    this.#now = now
    this.#events = events
  }

  get gate(): number {
    return this.#now.gate
  }

  set(now: VerifierSnapshot): void {
    this.#now = now
  }

  score(window: Float32Array, headScore: number): number {
    this.#events.push({ kind: 'window', head: this.#head, window, score: headScore })
    const model = this.#now.logistic
    return model ? predict(model, window) : headScore
  }
}

/** The chain on the runtime's thread, and its verifiers to keep up to date. */
export interface ThreadChain {
  readonly chain: ScoringChain
  /** Each phrase's verifier snapshots are set here when the event loop's change. */
  update(verifiers: readonly (VerifierSnapshot | undefined)[]): void
}

/**
 * Builds the chain where the models are (model-worker.ts): the noise prefill, the feature pipeline
 * and the heads on this thread's own sessions, so a request runs them all with no hand-off.
 * Resolves once the prefill has checked both models (`noisePrefill`); `ready` is the chain, once
 * the rest of the prefill is made. A start listens from the first: the prefill is the embeddings
 * of the noise before the first chunk, and the thread makes them before it scores that chunk.
 */
export async function threadChain(
  spec: ChainSpec,
  sessionOf: (n: number) => ModelSession,
): Promise<{ readonly ready: Promise<ThreadChain> }> {
  const mel = sessionOf(spec.mel)
  const embedding = sessionOf(spec.embedding)
  let checked: () => void = () => {}
  const both = new Promise<void>((resolve) => {
    checked = resolve
  })
  const prefill = noisePrefill(mel, embedding, spec.reach, checked)
  // A model that is not what it should be fails here, before the start is answered.
  await Promise.race([both, prefill])
  return { ready: prefill.then((p) => chainOn(spec, sessionOf, p)) }
}

function chainOn(
  spec: ChainSpec,
  sessionOf: (n: number) => ModelSession,
  prefill: Float32Array,
): ThreadChain {
  const mel = sessionOf(spec.mel)
  const embedding = sessionOf(spec.embedding)
  const events: ChainEvent[] = []
  const verifiers = spec.heads.map((h, i) =>
    h.verifier ? new ThreadVerifier(i, h.verifier, events) : undefined,
  )
  const heads: ChainHead[] = spec.heads.map((h, i) => ({
    phrase: h.phrase,
    model: sessionOf(h.session),
    threshold: h.threshold,
    verifier: verifiers[i],
    companion: h.companion,
  }))
  const chain = new ScoringChain({
    features: FeaturePipeline.create(mel, embedding, prefill),
    heads,
    consecutive: spec.consecutive,
    refractoryMs: spec.refractoryMs,
    coarseHop: spec.coarseHop,
    events,
  })
  return {
    chain,
    update(now) {
      now.forEach((s, i) => {
        if (s) verifiers[i]?.set(s)
      })
    },
  }
}
