import { afterAll, describe, expect, it } from 'vitest'
import { EMBEDDING_SIZE, noisePrefill } from '../../../src/adapters/openwakeword/features.js'
import type { ModelSession } from '../../../src/adapters/openwakeword/model-session.js'
import { loadRuntime } from '../../../src/adapters/openwakeword/runtime.js'
import { EMBEDDING, MEL } from '../../helpers/wake.js'

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
