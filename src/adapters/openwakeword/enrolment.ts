import { atSpeed, cutShort, pinkNoise, underNoise } from './augment.js'
import type { OpenWakeWordDetector } from './detector.js'
import { EMBEDDING_SIZE, SAMPLE_RATE_HZ } from './features.js'
import { type LogisticModel, predict, trainLogistic } from './logistic.js'
import { DEFAULT_VERIFIER_GATE, type EnrolmentSummary, type VerifierStage } from './verifier.js'

/**
 * Training a household's verifier (upstream's custom_verifier_model method, in our own code):
 * each enrolment clip is scored by the real detector several times from slightly different start
 * points, and every window of embeddings on which the head reaches its threshold is a positive;
 * every window of the negative audio (the room, other speech) is a negative. A logistic regression
 * separates them. Leave-one-out then asks, for each clip, whether a verifier trained without it
 * would still let it wake the speaker.
 */
export interface Clip {
  readonly name: string
  /** S16LE mono at 16 kHz. */
  readonly pcm: Uint8Array
  /**
   * A negative that sounds like the phrase ("hey jars"): heard again at other speeds, as other
   * voices would say it (`negativeSpeeds`).
   */
  readonly nearMiss?: boolean
  /**
   * A positive said in one breath with a command ("hey jarvis what time is it"): the head seldom
   * reaches its threshold there, so its windows count from the gate up, where the verifier will be
   * asked about them; never cut short as a negative (a cut could still hold the whole phrase).
   */
  readonly oneBreath?: boolean
}

export interface EnrolOptions {
  /** A detector with this one head, scoring through `stage` (the recorder below). */
  readonly detector: Pick<OpenWakeWordDetector, 'reset' | 'settled' | 'scoreRecorded'>
  readonly recorder: WindowRecorder
  readonly threshold: number
  readonly consecutive: number
  /** Where the verifier will decide (the head's score from which its probability counts). */
  readonly gate: number
  /**
   * Negatives the head scored at or above this are the hard ones, weighted as `hardShare`.
   * Upstream's gate (0.1) by default, whatever `gate` is: trained on every negative the head
   * half-heard, the verifier turned away more at every gate (bench/RESULTS.md, "household
   * verifier", the run trained from 0.3).
   */
  readonly hardFrom?: number
  readonly l2?: number
  /** The share of the loss the hard negatives carry together. */
  readonly hardShare?: number
  /**
   * The speeds (pitch with them) at which each near-miss and each cut-short clip is heard again:
   * the household's "hey jars" as its guests might say it.
   */
  readonly negativeSpeeds?: readonly number[]
}

interface ClipResult {
  readonly name: string
  /** The head alone reached its threshold on it (else it gave no positive windows). */
  readonly heard: boolean
  /** The detector would fire on it with the verifier trained without this clip. */
  readonly acceptedLeftOut: boolean
  /** The highest score that counted (verifier where the head passed the gate), left out. */
  readonly bestLeftOut: number
}

export interface Enrolment {
  readonly model: LogisticModel
  /** Near-misses and cut-short clips heard again at other speeds. */
  readonly copies: number
  /** Embeddings per window: the head's. */
  readonly window: number
  readonly clips: readonly ClipResult[]
  readonly summary: Omit<EnrolmentSummary, 'at'>
  /**
   * Windows of the household's clips heard under noise (pink, and its own negative speech, at
   * 10 dB) that the head passed to the verifier: what a lesson must keep accepting so a household
   * that marks false wakes is not made deaf in a noisy room (docs/wake-word.md, "Teaching it").
   */
  readonly noisy: Float32Array[]
}

/** Start points for each clip's passes, in samples: upstream takes five random ones in a chunk. */
const PASS_OFFSETS = [0, 256, 512, 768, 1024]
/** Silence around a clip, so the detector's warm-up chunks fall before the phrase. */
const LEAD_SAMPLES = SAMPLE_RATE_HZ
const TAIL_SAMPLES = SAMPLE_RATE_HZ / 2
/** The detector zeroes its first 5 chunks after a reset. */
const WARMUP_CHUNKS = 5
const NEGATIVE_FOLDS = 5
/** Refits of leave-one-out start from the full fit, so few steps are needed. */
const REFIT_ITERATIONS = 150
const DEFAULT_HARD_SHARE = 0.35
/** How much of each clip's voiced span its cut-short negatives keep. */
const CUT_SHORT = [0.55, 0.7]
const DEFAULT_NEGATIVE_SPEEDS: readonly number[] = [0.8, 0.9, 1.1, 1.2]
/** The noisy room the lesson's guard is heard in: 10 dB under the phrase, as the bench measures. */
const NOISY_SNR_DB = 10
/** The best windows kept of each clip in each noise, and of them all. */
const NOISY_PER_CLIP = 2
const NOISY_KEPT = 32

/** A verifier stage that scores nothing: it keeps every window with the head's score. */
export class WindowRecorder implements VerifierStage {
  readonly gate = 0
  windows: { window: Float32Array; head: number }[] = []
  score(window: Float32Array, headScore: number): number {
    this.windows.push({ window, head: headScore })
    return headScore
  }
}

/**
 * Scores one clip from a fresh start, in silence so that the warm-up falls before it (a short
 * clip would lose its first 400 ms otherwise), and returns its windows after the warm-up.
 */
async function windowsOf(
  o: EnrolOptions,
  pcm: Uint8Array,
  offsetSamples: number,
): Promise<{ window: Float32Array; head: number }[]> {
  o.detector.reset()
  await o.detector.settled()
  o.recorder.windows = []
  const body = pcm.subarray(Math.min(pcm.length, offsetSamples * 2))
  const audio = new Uint8Array((LEAD_SAMPLES + TAIL_SAMPLES) * 2 + body.length)
  audio.set(body, LEAD_SAMPLES * 2)
  await o.detector.scoreRecorded(audio)
  return o.recorder.windows.slice(WARMUP_CHUNKS)
}

/** Whether the detector's rule fires on a clip's chunks, and the best score that counted. */
function fires(
  chunks: readonly { window: Float32Array; head: number }[],
  model: LogisticModel,
  o: EnrolOptions,
): { fired: boolean; best: number } {
  let run = 0
  let best = 0
  let fired = false
  for (const c of chunks) {
    const s = c.head >= o.gate ? predict(model, c.window) : c.head
    best = Math.max(best, s)
    run = s >= o.threshold ? run + 1 : 0
    if (run >= o.consecutive) fired = true
  }
  return { fired, best }
}

export async function enrol(
  o: EnrolOptions,
  positives: readonly Clip[],
  negatives: readonly Clip[],
): Promise<Enrolment> {
  const perClip: {
    name: string
    windows: Float32Array[]
    first: { window: Float32Array; head: number }[]
  }[] = []
  for (const clip of positives) {
    const windows: Float32Array[] = []
    let first: { window: Float32Array; head: number }[] = []
    for (const offset of PASS_OFFSETS) {
      const chunks = await windowsOf(o, clip.pcm, offset)
      if (offset === 0) first = chunks
      const from = clip.oneBreath ? o.gate : o.threshold
      for (const c of chunks) if (c.head >= from) windows.push(c.window)
    }
    perClip.push({ name: clip.name, windows, first })
  }
  const speeds = o.negativeSpeeds ?? DEFAULT_NEGATIVE_SPEEDS
  const negative: { window: Float32Array; head: number }[] = []
  let copies = 0
  const hearNegative = async (pcm: Uint8Array, nearMiss: boolean) => {
    negative.push(...(await windowsOf(o, pcm, 0)))
    if (!nearMiss) return
    for (const f of speeds) {
      negative.push(...(await windowsOf(o, atSpeed(pcm, f), 0)))
      copies++
    }
  }
  for (const clip of negatives) await hearNegative(clip.pcm, clip.nearMiss === true)
  // The household's own phrase cut short ("hey jar…") is the nearest miss there is, in its own
  // voice and room: every clip gives two, whatever the phrase.
  for (const clip of positives) {
    if (clip.oneBreath) continue
    for (const keep of CUT_SHORT) {
      const cut = cutShort(clip.pcm, keep)
      if (cut) await hearNegative(cut, true)
    }
  }
  const heard = perClip.filter((c) => c.windows.length > 0)
  if (heard.length === 0) throw new Error('the wake model did not hear the phrase in any clip')
  if (negative.length === 0) throw new Error('no negative audio')

  const train = (leaveClip: number, leaveFold: number, start?: LogisticModel) => {
    const x: Float32Array[] = []
    const y: number[] = []
    const hard: boolean[] = []
    perClip.forEach((c, i) => {
      if (i === leaveClip) return
      for (const w of c.windows) {
        x.push(w)
        y.push(1)
        hard.push(false)
      }
    })
    negative.forEach((n, i) => {
      if (foldOf(i, negative.length) === leaveFold) return
      x.push(n.window)
      y.push(0)
      hard.push(n.head >= (o.hardFrom ?? DEFAULT_VERIFIER_GATE))
    })
    return trainLogistic(x, y, {
      sampleWeights: weigh(y, hard, o.hardShare ?? DEFAULT_HARD_SHARE),
      ...(o.l2 !== undefined && { l2: o.l2 }),
      ...(start && { start, maxIterations: REFIT_ITERATIONS }),
    })
  }
  const model = train(-1, -1)
  const clips = perClip.map((c, i) => {
    const left = c.windows.length > 0 && heard.length > 1 ? train(i, -1, model) : model
    const f = fires(c.first, left, o)
    return {
      name: c.name,
      heard: c.windows.length > 0,
      acceptedLeftOut: f.fired,
      bestLeftOut: f.best,
    }
  })
  let negativesChecked = 0
  let negativesAccepted = 0
  for (let fold = 0; fold < NEGATIVE_FOLDS; fold++) {
    const inFold = negative.filter(
      (n, i) => foldOf(i, negative.length) === fold && n.head >= o.gate,
    )
    if (inFold.length === 0) continue
    const left = train(-1, fold, model)
    negativesChecked += inFold.length
    negativesAccepted += inFold.filter((n) => predict(left, n.window) >= o.threshold).length
  }
  return {
    model,
    noisy: await noisyWindows(o, positives, negatives, model),
    copies,
    window: (negative[0]?.window.length ?? 0) / EMBEDDING_SIZE,
    clips,
    summary: {
      clips: positives.length,
      positiveWindows: perClip.reduce((n, c) => n + c.windows.length, 0),
      negativeWindows: negative.length,
      leaveOneOutAccepted: clips.filter((c) => c.acceptedLeftOut).length,
      negativesAccepted,
      negativesChecked,
    },
  }
}

/**
 * Each clip under pink noise and under the household's own negative speech (its sentences and
 * room, a babble of its own), 10 dB down: of the windows the head passes to the verifier, the ones
 * it scores highest, a few a clip. Features only: the noisy audio is never kept.
 */
async function noisyWindows(
  o: EnrolOptions,
  positives: readonly Clip[],
  negatives: readonly Clip[],
  model: LogisticModel,
): Promise<Float32Array[]> {
  const speech = negatives.filter((c) => !c.nearMiss).map((c) => c.pcm)
  const babble = new Uint8Array(speech.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of speech) {
    babble.set(p, at)
    at += p.length
  }
  const noises = [pinkNoise(10, 46), ...(babble.length > 0 ? [babble] : [])]
  const kept: { window: Float32Array; score: number }[] = []
  for (const [i, clip] of positives.entries()) {
    for (const noise of noises) {
      const offset = (i * 7919 * 16) % Math.max(1, noise.length >> 1)
      const chunks = await windowsOf(o, underNoise(clip.pcm, noise, NOISY_SNR_DB, offset), 0)
      kept.push(
        ...chunks
          .filter((c) => c.head >= o.gate)
          .map((c) => ({ window: c.window, score: predict(model, c.window) }))
          .sort((a, b) => b.score - a.score)
          .slice(0, NOISY_PER_CLIP),
      )
    }
  }
  return kept
    .sort((a, b) => b.score - a.score)
    .slice(0, NOISY_KEPT)
    .map((k) => k.window)
}

/**
 * Half the loss is the positives'. Of the other half, the hard negatives — windows the head
 * already let through, the only ones the verifier is ever asked about — carry `hardShare`
 * whatever their number (a handful among hundreds of quiet windows), the rest the remainder.
 */
function weigh(y: readonly number[], hard: readonly boolean[], hardShare: number): number[] {
  const p = y.filter((v) => v === 1).length
  const h = hard.filter(Boolean).length
  const e = y.length - p - h
  const hs = h === 0 ? 0 : e === 0 ? 0.5 : hardShare
  return y.map((v, i) => (v === 1 ? 0.5 / p : hard[i] ? hs / h : (0.5 - hs) / e))
}

/** Contiguous folds: neighbouring windows overlap, so a random split would leak. */
function foldOf(i: number, n: number): number {
  return Math.floor((i * NEGATIVE_FOLDS) / n)
}
