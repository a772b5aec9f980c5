import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type {
  OpenWakeWordDetector,
  OpenWakeWordDetectorOptions,
} from '../../../src/adapters/openwakeword/detector.js'
import { type LogisticModel, predict } from '../../../src/adapters/openwakeword/logistic.js'
import type { VerifierStage } from '../../../src/adapters/openwakeword/verifier.js'
import { COARSE_HOP } from '../../../src/app/wake-detector.js'
import { parseWav } from '../../../src/audio/wav.js'
import type { WakeDetection } from '../../../src/ports/wake-word.js'
import { HEADS, phasedDetector, pinnedDetector, silence, wavPcm } from '../../helpers/wake.js'

const open: OpenWakeWordDetector[] = []
afterAll(async () => {
  for (const d of open) await d.close()
})

/** Speech with no wake phrase (the VAD fixtures'), `ms` of it. */
function talk(ms: number): Uint8Array {
  const file = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'vad', 'speech-en-gb-f.wav')
  return parseWav(readFileSync(file), 16_000).pcm.subarray(0, ms * 32)
}

/** A pass-through stage at gate 0 until `lesson` gives it a model (a household's lesson). */
class Lesson implements VerifierStage {
  readonly gate = 0
  logistic: LogisticModel | undefined
  kept = 0
  score(window: Float32Array, headScore: number): number {
    this.kept++
    return this.logistic ? predict(this.logistic, window) : headScore
  }
}

/** A model whose score follows the window, so a thread scoring another window would show. */
const MODEL: LogisticModel = {
  weights: Float64Array.from({ length: 16 * 96 }, (_, j) => ((j % 7) - 3) * 0.01),
  bias: -1,
}

/** Every score as its exact bits (a float32 widened to a double: the same double, or not). */
const line = (scores: readonly number[], at: number) => `${at}: ${scores.join(' ')}`

interface Heard {
  readonly scores: string[]
  readonly wakes: WakeDetection[]
}

/**
 * A quiet room (no voice near: mel frames only), then every pretrained phrase's clip and speech
 * (coarse, then exact near a threshold, the second phase on), pushed in 20 ms frames as the
 * microphone does and settled every 200 ms, so nothing is dropped.
 */
async function listen(d: OpenWakeWordDetector, lesson?: Lesson): Promise<void> {
  const parts: [Uint8Array, boolean][] = [[silence(1500), false]]
  for (const h of HEADS)
    parts.push([wavPcm(h.clip), true], [talk(1500), true], [silence(800), false])
  let at = 0
  for (const [i, [pcm, voice]] of parts.entries()) {
    // After the quiet room, before the first phrase, the lesson lands: from here its model scores.
    if (lesson && i === 1) lesson.logistic = MODEL
    for (let f = 0, n = 0; f + 640 <= pcm.length; f += 640, n++) {
      at += 20
      d.push(pcm.subarray(f, f + 640), at, voice)
      if (n % 10 === 9) await d.settled()
    }
    await d.settled()
  }
  expect(d.stats().chunksDropped).toBe(0)
}

/** Where a detector's scores (each as its exact bits) and wakes go. */
function heard(): Heard & Pick<OpenWakeWordDetectorOptions, 'onWake' | 'onScores'> {
  const h: Heard = { scores: [], wakes: [] }
  return {
    ...h,
    onWake: (w) => h.wakes.push(w),
    onScores: (s, at) => h.scores.push(line(s, at)),
  }
}

/**
 * Issue 47: the chain (mel, embedding, heads, the second phase, the wake rule) runs on the
 * runtime's thread, one request per scored chunk, where it ran on the event loop with a request
 * per model run. The same runs on the same sessions: every score the same double, the same wakes.
 */
describe("the scoring chain on the runtime's thread", () => {
  it('gives every score and every wake of the chain run from the event loop, bit for bit', async () => {
    const onThread = heard()
    const inProcess = heard()
    const threaded = await pinnedDetector({
      ...onThread,
      phrases: HEADS.map((h) => ({ phrase: h.name, file: h.file, threshold: 0.5 })),
      coarseHop: COARSE_HOP,
    })
    const local = await phasedDetector({
      ...inProcess,
      threshold: 0.5,
      allHeads: true,
      coarseHop: COARSE_HOP,
    })
    open.push(threaded, local)
    await listen(threaded)
    await listen(local)

    expect(onThread.scores).toEqual(inProcess.scores)
    expect(onThread.wakes).toEqual(inProcess.wakes)
    // Each phrase reached by a voice woke it; the quiet room was quiet, the talk coarse.
    expect(onThread.wakes.map((w) => w.phrase)).toEqual(
      expect.arrayContaining(['hey_jarvis', 'alexa']),
    )
    // The same work counted (the lag and the rests are the machine's timing, not the chain's).
    const counts = (d: OpenWakeWordDetector) => {
      const { chunksScored, chunksQuiet, coarseScores, offsetScores, chunksDropped } = d.stats()
      return { chunksScored, chunksQuiet, coarseScores, offsetScores, chunksDropped }
    }
    const [t, l] = [counts(threaded), counts(local)]
    expect(t).toEqual(l)
    expect(t.chunksQuiet).toBeGreaterThan(30)
    expect(t.coarseScores).toBeGreaterThan(10)
    expect(t.offsetScores).toBeGreaterThan(0)
  })

  it("scores with a household's new verifier from the next request, and hands every window back to be kept", async () => {
    const onThread = heard()
    const inProcess = heard()
    const [threadStage, localStage] = [new Lesson(), new Lesson()]
    const jarvis = HEADS[0]?.file ?? ''
    const threaded = await pinnedDetector({
      ...onThread,
      phrases: [{ phrase: 'hey jarvis', file: jarvis, threshold: 0.5, verifier: threadStage }],
      coarseHop: COARSE_HOP,
    })
    const local = await phasedDetector({
      ...inProcess,
      threshold: 0.5,
      verifier: localStage,
      coarseHop: COARSE_HOP,
    })
    open.push(threaded, local)
    await listen(threaded, threadStage)
    await listen(local, localStage)

    expect(onThread.scores).toEqual(inProcess.scores)
    expect(onThread.wakes).toEqual(inProcess.wakes)
    // The stage kept a window for every exact score on both. In process the lesson's model
    // scores from the chunk after it lands: the thread's scores are the same, so it did too.
    expect(threadStage.kept).toBe(localStage.kept)
    expect(threadStage.kept).toBeGreaterThan(20)
  })
})
