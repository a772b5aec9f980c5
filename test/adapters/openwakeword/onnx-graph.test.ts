import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { graphInputs } from '../../../src/adapters/openwakeword/onnx-graph.js'
import { importNative, loadSession } from '../../../src/adapters/openwakeword/runtime.js'
import { EMBEDDING, MODEL_DIR } from '../../helpers/wake.js'

const MODELS = readdirSync(MODEL_DIR).filter((f) => f.endsWith('.onnx'))

describe("a model's inputs read from its graph", () => {
  it('are the names and shapes a session of it reports, for every model in the package', async () => {
    const ort = await importNative()
    // The package's eight: the two feature models, the heads, timer_v0.1 and silero_vad (four inputs).
    expect(MODELS.length).toBeGreaterThanOrEqual(8)
    for (const f of MODELS) {
      const bytes = readFileSync(join(MODEL_DIR, f))
      const session = await ort.InferenceSession.create(bytes)
      const reported = session.inputNames.map((name) => ({
        name,
        shape: session.inputMetadata?.find((m) => m.name === name)?.shape,
      }))
      await session.release()
      expect(graphInputs(bytes), f).toEqual(reported)
    }
  })

  it('refuses bytes that are not a model', () => {
    expect(() => graphInputs(Buffer.from('not an onnx model at all'))).toThrow()
  })
})

describe('loading the embedding model', () => {
  it('makes sessions of its three parts only, never of the whole model, and reports its input', async () => {
    const ort = await importNative()
    const whole = readFileSync(EMBEDDING)
    const made: number[] = []
    // The real runtime, counting the model bytes each session is made from.
    const counting = {
      ...ort,
      Tensor: ort.Tensor,
      InferenceSession: {
        create(bytes: Uint8Array, options?: Record<string, unknown>) {
          made.push(bytes.length)
          return ort.InferenceSession.create(bytes, options)
        },
      },
    }
    const session = await loadSession(counting, 'native', EMBEDDING)
    try {
      expect(made).toHaveLength(3)
      expect(made).not.toContain(whole.length)
      expect(session.inputName).toBe('input_1')
      expect(session.inputShape).toEqual(['unk__314', 76, 32, 1])
      // It runs: one window gives one 96-value embedding.
      const out = await session.run(new Float32Array(76 * 32).fill(1), [1, 76, 32, 1])
      expect(out).toHaveLength(96)
    } finally {
      await session.close()
    }
  })
})
