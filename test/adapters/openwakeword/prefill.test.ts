import { afterAll, describe, expect, it } from 'vitest'
import { EMBEDDING_SIZE, noisePrefill } from '../../../src/adapters/openwakeword/features.js'
import type { ModelSession } from '../../../src/adapters/openwakeword/model-session.js'
import { threadChain } from '../../../src/adapters/openwakeword/remote-chain.js'
import { loadRuntime } from '../../../src/adapters/openwakeword/runtime.js'
import { EMBEDDING, HEADS, MEL } from '../../helpers/wake.js'

const sessions: ModelSession[] = []
afterAll(async () => {
  for (const s of sessions) await s.close()
})

/**
 * A start makes only the newest embeddings of the noise prefill that a window can read (issue 47):
 * they must be exactly upstream's newest ones (the same windows of the same 4 s of noise), made on
 * the runtime's thread in one request or in process with the sessions alike.
 */
describe('the noise prefill', () => {
  it("the newest `reach` embeddings are upstream's newest, on the thread and in process", async () => {
    const runtime = await loadRuntime('native')
    const mel = await runtime.load(MEL)
    const embedding = await runtime.load(EMBEDDING)
    sessions.push(mel, embedding)
    const all = await noisePrefill(mel, embedding, 120)
    // 4 s of noise: 400 mel frames, a window of 76 every 8 → 41 embeddings, as upstream makes.
    expect(all.length).toBe(41 * EMBEDDING_SIZE)
    const onThread = await runtime.prefill?.(mel, embedding, 18)
    const inProcess = await noisePrefill(mel, embedding, 18)
    const newest = all.slice(-18 * EMBEDDING_SIZE)
    expect(onThread).toEqual(newest)
    expect(inProcess).toEqual(newest)
    // Not all one value: the noise gives every embedding its own.
    expect(newest.slice(0, EMBEDDING_SIZE)).not.toEqual(newest.slice(-EMBEDDING_SIZE))
  })
})

/**
 * A start listens once both models are checked (issue 47): the chain on the runtime's thread is
 * answered after the mel frames and the newest window's embedding, and is ready to score only once
 * the rest of the prefill is made — so the first chunk is scored on the whole prefill.
 */
describe("the thread's chain", () => {
  it('is answered after one embedding of the prefill, and scores only once all are made', async () => {
    const runtime = await loadRuntime('native')
    const jarvis = HEADS.find((h) => h.name === 'hey_jarvis')
    if (!jarvis) throw new Error('no hey_jarvis head')
    const [mel, embedding, head] = await Promise.all(
      [MEL, EMBEDDING, jarvis.file].map((f) => runtime.load(f)),
    )
    if (!mel || !embedding || !head) throw new Error('a model did not load')
    sessions.push(mel, embedding, head)
    // The embedding's runs after the first wait until the test lets each one go.
    let made = 0
    const held: (() => void)[] = []
    const gated: ModelSession = {
      file: embedding.file,
      inputName: embedding.inputName,
      inputShape: embedding.inputShape,
      run: async (input, dims) => {
        const out = await embedding.run(input, dims)
        made++
        if (made > 1) await new Promise<void>((go) => held.push(go))
        return out
      },
      close: async () => {},
    }
    const bySession = [mel, gated, head]
    const spec = {
      mel: 0,
      embedding: 1,
      heads: [
        {
          session: 2,
          phrase: 'hey_jarvis',
          threshold: 0.5,
          verifier: undefined,
          companion: undefined,
        },
      ],
      reach: 18,
      consecutive: 1,
      refractoryMs: 2000,
      coarseHop: undefined,
    }
    const { ready } = await threadChain(spec, (n) => bySession[n] as ModelSession)
    expect(made).toBe(1)
    let chain: unknown
    void ready.then((c) => {
      chain = c
    })
    // Held: the second embedding is made and waits; the chain is not there to score with.
    await new Promise((r) => setTimeout(r, 50))
    expect(made).toBe(2)
    expect(chain).toBeUndefined()
    while (chain === undefined) {
      held.shift()?.()
      await new Promise((r) => setTimeout(r, 1))
    }
    expect(made).toBe(18)
  })
})
