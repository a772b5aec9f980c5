import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  importNative,
  importWasm,
  loadSession,
} from '../../../src/adapters/openwakeword/runtime.js'
import { HEADS, MEL } from '../../helpers/wake.js'

/** A seeded generator: the same inputs on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a * 1_664_525 + 1_013_904_223) >>> 0
    return a / 4_294_967_296
  }
}

/**
 * The mel model and the heads are made at the `extended` optimisation level, which is made 2–4×
 * quicker than `all` (runtime.ts): that holds only while both give the same floats. Each model of
 * the package, loaded as a start loads it, against a session of the same bytes at `all` (the
 * level upstream runs, and these models ran at before), on inputs of the kind each reads.
 */
describe('the mel model and the heads at the quicker optimisation level', () => {
  for (const [runtime, load] of [
    ['native', importNative],
    ['wasm', importWasm],
  ] as const) {
    it(`give the same floats as at \`all\` (${runtime})`, async () => {
      const ort = await load()
      const random = seeded(7)
      const models = [
        { file: MEL, dims: [1, 1760], scale: 8000 },
        ...HEADS.map((h) => ({ file: h.file, dims: [1, 0, 96], scale: 3 })),
      ]
      let compared = 0
      for (const m of models) {
        const ours = await loadSession(ort, runtime, m.file)
        const all = await ort.InferenceSession.create(readFileSync(m.file), {
          executionProviders: [runtime === 'native' ? 'cpu' : 'wasm'],
          intraOpNumThreads: 1,
          interOpNumThreads: 1,
          graphOptimizationLevel: 'all',
        })
        // A head's window is its declared input's second dimension (16 for most, 22 for weather).
        const window = Number(ours.inputShape[1]) || 16
        const dims = m.dims.map((d) => (d === 0 ? window : d))
        const size = dims.reduce((a, b) => a * b, 1)
        for (let i = 0; i < 40; i++) {
          const x = Float32Array.from({ length: size }, () => (random() * 2 - 1) * m.scale)
          const got = await ours.run(x.slice(), dims)
          const input = all.inputNames[0] ?? ''
          const output = all.outputNames[0] ?? ''
          const want = (await all.run({ [input]: new ort.Tensor('float32', x.slice(), dims) }))[
            output
          ]?.data
          expect(got, `${m.file}, input ${i}`).toEqual(want)
          compared += got.length
        }
        await ours.close()
        await all.release()
      }
      // Every model answered: the mel frames and one score per head and input.
      expect(compared).toBeGreaterThan(40 * HEADS.length)
    })
  }
})
