import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { importNative, loadSession } from '../../../src/adapters/openwakeword/runtime.js'
import {
  checkedStreaming,
  embeddingParts,
  type Stage,
  streamingEmbedding,
  switchingEmbedding,
} from '../../../src/adapters/openwakeword/streaming-embedding.js'
import { EMBEDDING, HEADS, MEL, wavPcm } from '../../helpers/wake.js'

const DIMS = [1, 76, 32, 1]
const options = {
  executionProviders: ['cpu'],
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
}

/** The runtime in this thread (the service runs it on its own: model-thread.ts). */
async function runtime() {
  const ort = await importNative()
  const session = async (bytes: Uint8Array) => {
    const s = await ort.InferenceSession.create(bytes, options)
    const [input = '', output = ''] = [s.inputNames[0], s.outputNames[0]]
    return async (data: Float32Array, dims: readonly number[]) => {
      const out = (await s.run({ [input]: new ort.Tensor('float32', data, dims) }))[output]
      return { data: out?.data as Float32Array, dims: out?.dims ?? [] }
    }
  }
  return { ort, session }
}

/** The real embedding model's three parts, each a session in this thread. */
async function partStages() {
  const { session } = await runtime()
  const parts = embeddingParts(readFileSync(EMBEDDING))
  const stages = (await Promise.all(parts.bytes.map(session))) as unknown as [Stage, Stage, Stage]
  return { parts, stages }
}

/** A clip's mel frames as the detector makes them (scaled x/10 + 2), from the real mel model. */
async function melFrames(clip: string): Promise<Float32Array> {
  const { session } = await runtime()
  const mel = await session(readFileSync(MEL))
  const pcm = wavPcm(clip)
  const samples = Float32Array.from(new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1))
  const out = (await mel(samples, [1, samples.length])).data
  return out.map((x) => x / 10 + 2)
}

/** The 76 frames from `step` · 4 on (a chunk is 8 frames: two steps). */
const windowAt = (frames: Float32Array, step: number) =>
  frames.slice(step * 4 * 32, (step * 4 + 76) * 32)

describe('the embedding model, streamed', () => {
  it('gives the whole model’s embeddings, bit for bit, for windows moved on by half a chunk, 1, 2 or 4 chunks and after a jump', async () => {
    const { session } = await runtime()
    const bytes = readFileSync(EMBEDDING)
    const parts = embeddingParts(bytes)
    // Two convolutions of 3 rows in the first part, four in the second (its rows at half rate).
    expect(parts.context).toEqual([4, 8])
    const stages = (await Promise.all(parts.bytes.map(session))) as unknown as [Stage, Stage, Stage]
    const whole = await session(bytes)
    const streamed = streamingEmbedding(parts, stages)

    const frames = await melFrames(HEADS.find((h) => h.name === 'hey_jarvis')?.clip ?? '')
    const steps = Math.floor((frames.length / 32 - 76) / 4)
    expect(steps).toBeGreaterThan(50)
    // In steps of 4 frames: exact scoring's hop (2), coarse scoring's (4), half a chunk (1), the
    // largest kept (8), a jump back, one too far to keep (10).
    const order = [0, 2, 4, 6, 7, 9, 13, 21, 22, 6, 8, 18, 20, 40, 42]
    for (const step of order) {
      const w = windowAt(frames, step)
      const a = await streamed(w, DIMS)
      const b = (await whole(w.slice(), DIMS)).data
      expect(Array.from(a), `step ${step}`).toEqual(Array.from(b))
    }
    // A batch is each window in turn.
    const batch = new Float32Array(2 * 76 * 32)
    batch.set(windowAt(frames, 26))
    batch.set(windowAt(frames, 28), 76 * 32)
    const both = await streamed(batch, [2, 76, 32, 1])
    const w14 = (await whole(windowAt(frames, 28), DIMS)).data
    expect(Array.from(both.subarray(96))).toEqual(Array.from(w14))
  })

  it('keeps two runs of windows apart (the chunks’ and the second phase’s), each moved on by a chunk: the whole model’s embeddings, bit for bit', async () => {
    const { session } = await runtime()
    const { parts, stages } = await partStages()
    const [s1, s2, s3] = stages
    const seen: number[] = []
    const first: Stage = (x, d) => {
      seen.push(d[2] ?? 0)
      return s1(x, d)
    }
    const whole = await session(readFileSync(EMBEDDING))
    const streamed = streamingEmbedding(parts, [first, s2, s3])
    // Two runs whose frames differ (as the second phase's own mel frames differ from the
    // chunks'), scored in turn as the detector does near a threshold.
    const a = await melFrames(HEADS.find((h) => h.name === 'hey_jarvis')?.clip ?? '')
    const b = await melFrames(HEADS.find((h) => h.name === 'alexa')?.clip ?? '')
    for (let chunk = 10; chunk < 16; chunk++) {
      for (const frames of [a, b]) {
        const w = windowAt(frames, 2 * chunk)
        const got = await streamed(w, DIMS)
        expect(Array.from(got), `chunk ${chunk}`).toEqual(
          Array.from((await whole(w.slice(), DIMS)).data),
        )
      }
    }
    // Each run's first window whole, then its 8 new frames and 4 rows of context a chunk.
    expect(seen).toEqual([76, 76, ...Array.from({ length: 10 }, () => 12)])
  })

  it('is not used when a part does not give the same rows on a window’s new frames alone', async () => {
    const {
      parts,
      stages: [s1, s2, s3],
    } = await partStages()
    expect(await checkedStreaming(parts, [s1, s2, s3], [76, 32])).toBe(true)
    // A first part whose rows depend on where its input starts (as one padding time would): a
    // hair off on anything shorter than a whole window. The check refuses to stream it.
    const padded: Stage = async (x, d) => {
      const out = await s1(x, d)
      return (d[2] ?? 0) < 76 ? { data: out.data.map((v) => v + 1e-3), dims: out.dims } : out
    }
    expect(await checkedStreaming(parts, [padded, s2, s3], [76, 32])).toBe(false)
  })

  it('is refused for a graph it cannot cut, saying why', () => {
    // A head: no reshape of its input into mel frames, no pooling of time.
    expect(() => embeddingParts(readFileSync(HEADS[0]?.file ?? ''))).toThrow(/reshap|pools time/)
    expect(() => embeddingParts(Uint8Array.from([0x3a, 0x05, 0x01]))).toThrow(/past the end/)
  })

  it('the embedding session the runtime loads runs whole, then streamed once checked: the same embeddings on a clip scored chunk by chunk', async () => {
    const { ort, session } = await runtime()
    const loaded = await loadSession(ort, 'native', EMBEDDING)
    // Whole until asked: the check is off the start's path (issue 47).
    expect(loaded.streamed).toBe(false)
    const whole = await session(readFileSync(EMBEDDING))
    const frames = await melFrames(HEADS.find((h) => h.name === 'alexa')?.clip ?? '')
    const chunks = Math.floor((frames.length / 32 - 76) / 8)
    const switchAt = Math.floor(chunks / 2)
    for (let chunk = 0; chunk < chunks; chunk++) {
      if (chunk === switchAt) {
        expect(await loaded.stream?.()).toBe('streamed')
        expect(loaded.streamed).toBe(true)
      }
      const w = windowAt(frames, 2 * chunk)
      expect(Array.from(await loaded.run(w, DIMS)), `chunk ${chunk}`).toEqual(
        Array.from((await whole(w.slice(), DIMS)).data),
      )
    }
    await loaded.close()
  })

  it('runs the parts whole over every window until checked, then streams; keeps them whole when the check fails; a close waits for the check', async () => {
    const {
      parts,
      stages: [s1, s2, s3],
    } = await partStages()
    const seen: number[] = []
    const first: Stage = (x, d) => {
      seen.push(d[2] ?? 0)
      return s1(x, d)
    }
    const frames = await melFrames(HEADS.find((h) => h.name === 'alexa')?.clip ?? '')
    let freed = 0
    const e = switchingEmbedding(parts, [first, s2, s3], [76, 32], async () => {
      freed++
    })
    // Listening before the check: every window's 76 frames through the first part, nothing else.
    // Mid-clip: the silence before the phrase has frames alike enough to look moved on by less.
    for (let chunk = 10; chunk < 13; chunk++) await e.run(windowAt(frames, 2 * chunk), DIMS)
    expect(seen).toEqual([76, 76, 76])
    expect(e.streamed).toBe(false)
    expect(await e.stream()).toBe('streamed')
    // After it, a chunk on: its 8 new frames and the first part's 4 rows of context.
    seen.length = 0
    await e.run(windowAt(frames, 26), DIMS)
    expect(seen).toEqual([12])
    await e.close()
    expect(freed).toBe(1)

    const padded: Stage = async (x, d) => {
      const out = await s1(x, d)
      return (d[2] ?? 0) < 76 ? { data: out.data.map((v) => v + 1e-3), dims: out.dims } : out
    }
    const failing = switchingEmbedding(parts, [padded, s2, s3], [76, 32], async () => {})
    expect(await failing.stream()).toBe('whole')
    expect(failing.streamed).toBe(false)

    // Closed while its check runs: the parts are freed once the check is done with them.
    const order: string[] = []
    const late = switchingEmbedding(
      parts,
      [
        async (x, d) => {
          const out = await s1(x, d)
          order.push('ran')
          return out
        },
        s2,
        s3,
      ],
      [76, 32],
      async () => {
        order.push('freed')
      },
    )
    const tried = late.stream()
    await late.close()
    expect(await tried).toBe('closed')
    expect(late.streamed).toBe(false)
    expect(order.at(-1)).toBe('freed')
    expect(order.filter((o) => o === 'ran').length).toBeGreaterThan(1)
  })
})
