import { readdirSync, readFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { loadWakeDetector } from '../../../src/adapters/openwakeword/load-detector.js'
import { loadRuntime } from '../../../src/adapters/openwakeword/runtime.js'
import type { WakeDetection } from '../../../src/ports/wake-word.js'
import { MemoryLogger } from '../../../src/testing/memory-logger.js'
import { until } from '../../helpers/wait.js'
import { EMBEDDING, HEADS, MEL, silence, wavPcm } from '../../helpers/wake.js'

const closers: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of closers) await c()
})

/**
 * Both runtimes run a model synchronously on the thread that calls it (onnxruntime-node too: its
 * `run` is a native call inside a setImmediate). Scoring lives on a worker thread, so while the
 * detector scores, the main thread's event loop keeps turning: the microphone's reads, the
 * speaker's writes, the button and the network go on. Counted, not timed: a setImmediate chain
 * advances once per turn of the loop, and on the main thread every chunk's models ran back to
 * back inside one turn (the count stayed near 0).
 */
describe.each(['native', 'wasm'] as const)('the %s runtime scores on its own thread', (runtime) => {
  it('the event loop keeps turning while several seconds of audio are scored in bulk', async () => {
    const wakes: WakeDetection[] = []
    const logger = new MemoryLogger()
    const d = await loadWakeDetector({
      onWake: (w) => wakes.push(w),
      phrases: HEADS.map((h) => ({ phrase: h.phrase, file: h.file, threshold: 0.5 })),
      melFile: MEL,
      embeddingFile: EMBEDDING,
      runtime,
      consecutive: 2,
      refractoryMs: 2000,
      logger,
    })
    closers.push(() => d.close())
    // The embedding model listens from the start as its parts run whole, and the ready line says
    // "whole"; their streamed run (streaming-embedding.ts) is checked after it, on the thread, and
    // a line says when it took over (a board whose check fails would say "whole" there).
    expect(logger.records.find((r) => r.msg === 'wake word detector ready')?.fields).toMatchObject({
      runtime,
      embedding: 'whole',
    })
    const streamedLine = () => logger.records.find((r) => r.msg === 'wake word embedding streamed')
    await until(() => streamedLine() !== undefined, 'the embedding streamed', 60_000)
    expect(streamedLine()?.fields).toMatchObject({ embedding: 'streamed' })
    const jarvis = HEADS.find((h) => h.name === 'hey_jarvis')
    const pcm = Buffer.concat([silence(1000), wavPcm(jarvis?.clip ?? ''), silence(1000)])

    let turns = 0
    let counting = true
    const turn = () => {
      turns++
      if (counting) setImmediate(turn)
    }
    setImmediate(turn)
    const before = d.stats().chunksScored
    await d.scoreRecorded(pcm)
    counting = false
    const chunks = d.stats().chunksScored - before

    // The same decision as ever (the scores themselves: detector.test.ts, native against wasm).
    expect(wakes.map((w) => w.phrase)).toEqual(['hey jarvis'])
    expect(chunks).toBeGreaterThan(30)
    // Every chunk is several round trips to the worker, each one a turn of the loop.
    expect(turns).toBeGreaterThanOrEqual(chunks)
    // Linux: the scoring thread runs 5 nice levels below the main thread, which keeps its own, so
    // the audio path gets a short CPU share first (wake-sheds-load.test.ts shows it end to end).
    if (process.platform === 'linux') {
      const own = nice(process.pid)
      expect(threadNices()).toContain(Math.min(19, own + 5))
    }
  })

  it('a model file the worker cannot read is the same clear error, naming the file', async () => {
    const loaded = await loadRuntime(runtime)
    await expect(loaded.load('/nonexistent/hey_nocturn.onnx')).rejects.toMatchObject({
      code: 'NOC_ERR_WAKE_MODEL_MISSING',
      message: expect.stringContaining('/nonexistent/hey_nocturn.onnx'),
    })
  })
})

/** A thread's nice value: field 19 of its stat line, counted after the command's parentheses. */
function nice(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
}

function threadNices(): number[] {
  return readdirSync('/proc/self/task').map((t) => nice(Number(t)))
}
