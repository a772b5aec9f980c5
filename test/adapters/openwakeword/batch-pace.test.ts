import { expect, it } from 'vitest'
import type { ChainResult, ChunkChain } from '../../../src/adapters/openwakeword/chain.js'
import { OpenWakeWordDetector } from '../../../src/adapters/openwakeword/detector.js'
import type { ModelSession } from '../../../src/adapters/openwakeword/model-session.js'
import { silentLogger } from '../../../src/core/logger.js'

// What the detector tells the microphone's router (`onBatch`), on a chain whose replies the test
// gives: the reads of a microphone that follows it end where a batch, or behind a chunk, is
// complete (coarse-batch.test.ts reads the real chain so, keeping up).

const reply = (exact: boolean): ChainResult => ({
  events: [],
  quiet: 0,
  coarse: 0,
  offsetScores: 0,
  exact,
})

it('tells 320 ms batches at first, 80 once exact; behind, the next read still ends where a chunk does', async () => {
  const told: [number, number][] = []
  const replies: ((r: ChainResult) => void)[] = []
  const chain: ChunkChain = {
    score: () => new Promise<ChainResult>((done) => replies.push(done)),
    close: async () => {},
  }
  const model: ModelSession = {
    file: 'head.onnx',
    inputName: 'x',
    inputShape: [],
    run: async () => new Float32Array(1),
    close: async () => {},
  }
  const d = new OpenWakeWordDetector({
    chain,
    heads: [{ phrase: 'hey jarvis', model, threshold: 0.5 }],
    consecutive: 2,
    refractoryMs: 2000,
    backlogMs: 60_000,
    coarseHop: 2,
    logger: silentLogger,
    now: () => 0,
    runtime: 'native',
    onWake: () => {},
    onBatch: (everyMs, nextMs) => told.push([everyMs, nextMs]),
  })
  let at = 0
  const push = (frames: number) => {
    for (let i = 0; i < frames; i++) {
      at += 20
      d.push(new Uint8Array(640), at, true)
    }
  }
  push(16)
  // At the first frame: batches of 320 ms, the first complete 300 ms after it.
  expect(told).toEqual([[320, 300]])
  expect(replies).toHaveLength(1)
  // While the chain scores, 4 more chunks and 40 ms of the next come: the detector is behind.
  push(18)
  replies[0]?.(reply(true))
  await new Promise((r) => setImmediate(r))
  // Exact now: a chunk a read, the next ending with the chunk being filled (40 ms on), not at
  // once, which would put every later read a frame or two before its chunk's end.
  expect(told).toEqual([
    [320, 300],
    [80, 40],
  ])
  expect(replies).toHaveLength(2)
  replies[1]?.(reply(false))
  await new Promise((r) => setImmediate(r))
  // Coarse again with nothing waiting: the next batch is 4 chunks on, less what is filled.
  expect(told.at(-1)).toEqual([320, 280])
})
