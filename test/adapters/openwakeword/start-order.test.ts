import { basename } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ChunkChain } from '../../../src/adapters/openwakeword/chain.js'
import { loadWakeDetector } from '../../../src/adapters/openwakeword/load-detector.js'
import type { ModelSession } from '../../../src/adapters/openwakeword/model-session.js'
import type { ThreadRuntime } from '../../../src/adapters/openwakeword/model-thread.js'
import { MemoryLogger } from '../../../src/testing/memory-logger.js'
import { until } from '../../helpers/wait.js'

/**
 * The runtime's thread as the start meets it (model-worker.ts), below the runtime's port: it takes
 * one request at a time, in the order they were posted, and runs each model synchronously. Once it
 * has answered the chain it makes the rest of the noise prefill before it reads another request,
 * so whatever was posted after the chain waits for that prefill. Here the prefill's rest is held
 * until the test lets it go.
 */
class OrderedThread implements ThreadRuntime {
  readonly name = 'native' as const
  readonly asked: string[] = []
  #queue: Promise<unknown> = Promise.resolve()
  #prefillDone: () => void = () => {}
  readonly #prefill = new Promise<void>((resolve) => {
    this.#prefillDone = resolve
  })

  /** The rest of the prefill is made: the thread reads its next request. */
  finishPrefill(): void {
    this.#prefillDone()
  }

  #take<T>(what: string, work: () => Promise<T>): Promise<T> {
    this.asked.push(what)
    const done = this.#queue.then(work)
    this.#queue = done.catch(() => {})
    return done
  }

  load(file: string): Promise<ModelSession> {
    return this.#take(`load ${basename(file)}`, async () => this.#session(file))
  }

  chain(): Promise<ChunkChain> {
    let answer: (c: ChunkChain) => void = () => {}
    const answered = new Promise<ChunkChain>((resolve) => {
      answer = resolve
    })
    void this.#take('chain', async () => {
      answer({
        score: () => Promise.reject(new Error('not scored here')),
        close: async () => {},
      })
      await this.#prefill
    })
    return answered
  }

  #session(file: string): ModelSession {
    const name = basename(file)
    const inputShape =
      name === 'head.onnx'
        ? [1, 16, 96]
        : name === 'embedding.onnx'
          ? [1, 76, 32, 1]
          : [1, 'samples']
    return {
      file,
      inputName: 'input',
      inputShape,
      run: (_input, _dims) =>
        this.#take(`run ${name}`, async () => new Float32Array(name === 'head.onnx' ? 1 : 0)),
      close: async () => {},
    }
  }
}

describe('the start on the runtime thread', () => {
  it('is ready once the chain is answered: the heads are checked before the prefill’s rest', async () => {
    const thread = new OrderedThread()
    let ready = false
    const loading = loadWakeDetector({
      onWake: () => {},
      phrases: [{ phrase: 'hey test', file: '/models/head.onnx', threshold: 0.5 }],
      melFile: '/models/mel.onnx',
      embeddingFile: '/models/embedding.onnx',
      runtime: thread,
      consecutive: 1,
      refractoryMs: 2000,
      logger: new MemoryLogger(),
    })
    void loading.then(() => {
      ready = true
    })
    // Before the fix the head's check was posted after the chain and waited here for the rest
    // of the prefill: the detector was not ready until the thread had made it.
    await until(() => ready, 'the detector ready while the prefill is still being made', 2000)
    expect(thread.asked).toEqual([
      'load mel.onnx',
      'load embedding.onnx',
      'load head.onnx',
      'run head.onnx',
      'chain',
    ])
    thread.finishPrefill()
    await (await loading).close()
  })
})
