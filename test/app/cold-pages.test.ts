import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { mappingsOf, parseSmaps, residentKb } from '../../src/adapters/libc/smaps.js'
import type { OpenWakeWordDetector } from '../../src/adapters/openwakeword/detector.js'
import { giveBackColdPages } from '../../src/app/compose/cold-pages.js'
import { type WakeConfig, wakeSchema } from '../../src/app/config/wake-schema.js'
import { coldPagesMarkFor } from '../../src/app/native-guard.js'
import { createWakeDetector } from '../../src/app/wake-detector.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { MODEL_DIR, silence } from '../helpers/wake.js'

/** What this process holds resident of a native library, in kB (its smaps). */
function residentOf(library: string): number {
  return residentKb(mappingsOf(parseSmaps(readFileSync('/proc/self/smaps', 'utf8')), [library]))
}

/** The speaker is quiet already. */
const quietNow = async () => {}

function wake(runtime: WakeConfig['runtime']): WakeConfig {
  return wakeSchema.parse({ models: [{ model: 'hey_jarvis' }], modelDir: MODEL_DIR, runtime })
}

/**
 * Gives the detector audio, 800 ms at a time, until the release is done with it; `between` is
 * called between two of them.
 */
async function listenThrough(
  d: OpenWakeWordDetector,
  release: Promise<void>,
  between: () => void = () => {},
): Promise<void> {
  let done = false
  const settled = release.finally(() => {
    done = true
  })
  let at = 0
  while (!done) {
    at = await d.scoreRecorded(silence(800), at)
    between()
  }
  await settled
}

/** A session under way until `ends()`. */
function underWay() {
  let ends = () => {}
  const over = new Promise<void>((done) => {
    ends = done
  })
  return { over, ends: () => ends() }
}

/** Scores audio until the settle's 50 chunks are passed by another 50, and a moment more. */
async function pastTheSettle(d: OpenWakeWordDetector): Promise<void> {
  let through = false
  void d.afterChunks(100).then(() => {
    through = true
  })
  for (let at = 0; !through; ) at = await d.scoreRecorded(silence(800), at)
  await new Promise((done) => setTimeout(done, 200))
}

/**
 * Wake mode on the native runtime gives back onnxruntime's cold code pages once the detector's load
 * has settled, guarded by a mark; on WASM, or after a start that died with the mark left, it
 * does not, and says why; nor while a session runs, from its start to its end. In this order: the
 * first two must run before koffi is ever loaded, and the third while the load's pages are still
 * all resident.
 */
describe.skipIf(process.platform !== 'linux')('the cold code pages in wake mode', () => {
  let dir: string
  const open: OpenWakeWordDetector[] = []
  afterEach(async () => {
    for (const d of open.splice(0)) await d.close()
    rmSync(dir, { recursive: true, force: true })
  })

  async function detector(runtime: WakeConfig['runtime'], log: MemoryLogger) {
    const d = await createWakeDetector(wake(runtime), { onWake: () => {}, logger: log })
    open.push(d)
    return d
  }

  /** A fresh store's mark and a native detector, logging to a memory of its own. */
  async function nativeStart() {
    dir = mkdtempSync(join(tmpdir(), 'nocturn-cold-'))
    const log = new MemoryLogger()
    const mark = coldPagesMarkFor(join(dir, 'nocturn.db'))
    return { log, mark, d: await detector('native', log) }
  }

  it('the WASM runtime: nothing is given back, no line, koffi never loaded', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nocturn-cold-'))
    const log = new MemoryLogger()
    const d = await detector('wasm', log)
    const mark = coldPagesMarkFor(join(dir, 'nocturn.db'))
    await giveBackColdPages(d, mark, log, quietNow)
    expect(log.records.filter((r) => 'coldPages' in r.fields)).toEqual([])
    expect(residentOf('koffi.node')).toBe(0)
    expect(existsSync(mark)).toBe(false)
  }, 60_000)

  it('a start that finds the mark skips the release and says so; the mark stays', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nocturn-cold-'))
    const log = new MemoryLogger()
    const mark = coldPagesMarkFor(join(dir, 'nocturn.db'))
    writeFileSync(mark, '2026-12-06T12:00:00.000Z\n')
    const d = await detector('native', log)
    await listenThrough(d, giveBackColdPages(d, mark, log, quietNow))
    const said = log.withEvent('wake_release_crashed')
    expect(said).toHaveLength(1)
    expect(said[0]?.fields.since).toBe('2026-12-06T12:00:00.000Z')
    expect(said[0]?.msg).toContain(`delete ${mark}`)
    expect(log.records.filter((r) => r.fields.coldPages === 'released')).toEqual([])
    expect(existsSync(mark)).toBe(true)
    // Nothing was given back: koffi, which would have done it, was never loaded.
    expect(residentOf('koffi.node')).toBe(0)
    expect(residentOf('libonnxruntime.so')).toBeGreaterThan(10 * 1024)
  }, 60_000)

  it('the native runtime: gives the pages back once the load settled, says how much, and takes its mark away once scoring survived it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nocturn-cold-'))
    const log = new MemoryLogger()
    const mark = coldPagesMarkFor(join(dir, 'nocturn.db'))
    const d = await detector('native', log)
    const resident = residentOf('libonnxruntime.so')
    let marked = 0
    // The mark stays for 25 chunks after the release: at least two of these 10-chunk steps.
    await listenThrough(d, giveBackColdPages(d, mark, log, quietNow), () => {
      if (existsSync(mark)) marked++
    })
    expect(marked).toBeGreaterThanOrEqual(2)
    const said = log.records.filter((r) => r.fields.coldPages === 'released')
    expect(said).toHaveLength(1)
    expect(said[0]?.fields.afterMb).toBeLessThan(said[0]?.fields.beforeMb as number)
    // 2 s of scoring faulted back what every chunk runs; the load's one-off code stays out.
    expect(residentOf('libonnxruntime.so')).toBeLessThan(resident / 2)
    expect(existsSync(mark)).toBe(false)
    expect(log.records.filter((r) => r.level === 'warn' || r.level === 'error')).toEqual([])
  }, 60_000)

  it('waits for a quiet speaker: nothing is given back while a session runs, then at once', async () => {
    const { log, mark, d } = await nativeStart()
    const session = underWay()
    const release = giveBackColdPages(d, mark, log, () => session.over)
    await pastTheSettle(d)
    expect(log.records.filter((r) => 'coldPages' in r.fields)).toEqual([])
    // The mark is left before the release begins: none, and no line, so none has begun.
    expect(existsSync(mark)).toBe(false)
    session.ends()
    await listenThrough(d, release)
    expect(log.records.filter((r) => r.fields.coldPages === 'released')).toHaveLength(1)
    expect(existsSync(mark)).toBe(false)
  }, 60_000)

  it('a session begun once the release has begun holds its next step until it ends', async () => {
    const { log, mark, d } = await nativeStart()
    const session = underWay()
    // Quiet when the release begins; a press to talk comes as its first step is done.
    let asked = 0
    const release = giveBackColdPages(d, mark, log, () =>
      asked++ === 0 ? quietNow() : session.over,
    )
    await pastTheSettle(d)
    // Begun (its mark is left, a step asked again) and held: no line yet.
    expect(existsSync(mark)).toBe(true)
    expect(asked).toBe(2)
    expect(log.records.filter((r) => 'coldPages' in r.fields)).toEqual([])
    session.ends()
    await listenThrough(d, release)
    expect(log.records.filter((r) => r.fields.coldPages === 'released')).toHaveLength(1)
    expect(asked).toBe(3)
  }, 60_000)
})
