import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { nativeSessions } from '../../../src/adapters/openwakeword/native-sessions.js'
import { importNative } from '../../../src/adapters/openwakeword/runtime.js'
import { MODEL_DIR } from '../../helpers/wake.js'

interface Tensor {
  readonly data: unknown
  readonly dims: readonly number[]
}
interface Session {
  readonly inputNames: readonly string[]
  readonly outputNames: readonly string[]
  readonly inputMetadata?: readonly { name: string; shape?: readonly unknown[] }[]
  run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>>
  release(): Promise<void>
}
/** onnxruntime-node's own API, as the package documents it. */
const ort = createRequire(import.meta.url)('onnxruntime-node') as {
  InferenceSession: { create(b: Uint8Array, o?: object): Promise<Session> }
  Tensor: new (type: 'float32', data: Float32Array, dims: readonly number[]) => Tensor
}
const OPTIONS = { executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1 }
const MODELS = readdirSync(MODEL_DIR).filter((f) => f.endsWith('.onnx'))

/** A seeded generator: the same inputs on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a * 1_664_525 + 1_013_904_223) >>> 0
    return a / 4_294_967_296
  }
}

/** The input each single-input model of the package reads, its free dimensions filled. */
function inputFor(s: Session, random: () => number): { dims: number[]; data: Float32Array } {
  const shape = s.inputMetadata?.[0]?.shape ?? []
  const dims = shape.map((d, i) => (typeof d === 'number' ? d : i === 0 ? 1 : 1760))
  const size = dims.reduce((a, b) => a * b, 1)
  return { dims, data: Float32Array.from({ length: size }, () => (random() * 2 - 1) * 3) }
}

describe("onnxruntime-node's sessions made on its binding", () => {
  const direct = nativeSessions()

  it('are made here (the binding is the one this was written for)', () => {
    expect(direct).toBeDefined()
  })

  it("report each model's inputs and outputs as the package's API does, every model of the package", async () => {
    expect(MODELS.length).toBeGreaterThanOrEqual(8)
    for (const f of MODELS) {
      const bytes = readFileSync(join(MODEL_DIR, f))
      const ours = await direct?.create(bytes, OPTIONS)
      const theirs = await ort.InferenceSession.create(bytes, OPTIONS)
      expect(ours?.inputNames, f).toEqual(theirs.inputNames)
      expect(ours?.outputNames, f).toEqual(theirs.outputNames)
      expect(
        ours?.inputMetadata?.map((m) => ({ name: m.name, shape: m.shape })),
        f,
      ).toEqual(theirs.inputMetadata?.map((m) => ({ name: m.name, shape: m.shape })))
      await ours?.release()
      await theirs.release()
    }
  })

  it("give the package's API's floats, bit for bit, on every model the wake word runs", async () => {
    const random = seeded(11)
    let compared = 0
    // The mel model, the embedding model (whole: its parts run on the same sessions) and the heads;
    // silero_vad (four inputs) is not one of them.
    for (const f of MODELS.filter((m) => !m.startsWith('silero'))) {
      const bytes = readFileSync(join(MODEL_DIR, f))
      for (const graphOptimizationLevel of ['extended', 'all']) {
        const o = { ...OPTIONS, graphOptimizationLevel }
        const ours = (await direct?.create(bytes, o)) as Session
        const theirs = await ort.InferenceSession.create(bytes, o)
        const input = ours.inputNames[0] ?? ''
        for (let i = 0; i < 5; i++) {
          const x = inputFor(ours, random)
          const a = await ours.run({ [input]: new ort.Tensor('float32', x.data, x.dims) })
          const b = await theirs.run({ [input]: new ort.Tensor('float32', x.data, x.dims) })
          for (const out of theirs.outputNames) {
            expect(a[out]?.dims, `${f} ${out}`).toEqual(b[out]?.dims)
            expect(a[out]?.data, `${f} ${out}, input ${i}`).toEqual(b[out]?.data)
            compared++
          }
        }
        await ours.release()
        await theirs.release()
      }
    }
    expect(compared).toBeGreaterThanOrEqual(7 * 2 * 5)
  })

  it('run without waiting for a turn of the event loop, where the package waits for one each run', async () => {
    const head = readFileSync(join(MODEL_DIR, 'hey_jarvis_v0.1.onnx'))
    /** Whether a `setImmediate` queued just before a run of `s` ran before its answer. */
    const turned = async (s: Session) => {
      const input = s.inputNames[0] ?? ''
      let turn = false
      setImmediate(() => {
        turn = true
      })
      await s.run({ [input]: new ort.Tensor('float32', new Float32Array(16 * 96), [1, 16, 96]) })
      return turn
    }
    const theirs = await ort.InferenceSession.create(head, OPTIONS)
    expect(await turned(theirs)).toBe(true)
    await theirs.release()
    // What the wake word's thread runs: the runtime as importNative gives it.
    const native = await importNative()
    const ours = await native.InferenceSession.create(head, OPTIONS)
    expect(await turned(ours as Session)).toBe(false)
    await ours.release()
  })
})
