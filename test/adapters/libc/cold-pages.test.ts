import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { releaseColdPages } from '../../../src/adapters/libc/cold-pages.js'
import { mappingsOf, parseSmaps, residentKb } from '../../../src/adapters/libc/smaps.js'
import type { OpenWakeWordDetector } from '../../../src/adapters/openwakeword/detector.js'
import { NATIVE_LIBRARIES } from '../../../src/adapters/openwakeword/runtime.js'
import { HEADS, pinnedDetector, wavPcm } from '../../helpers/wake.js'

const JARVIS = HEADS.find((h) => h.name === 'hey_jarvis')
if (!JARVIS) throw new Error('no hey_jarvis head')
const CLIP = wavPcm(JARVIS.clip)
const HELPERS = join(import.meta.dirname, '../../helpers/wake.ts')

/** What of onnxruntime's native library this process holds resident, in kB (its smaps). */
function ortResidentKb(): number {
  return residentKb(
    mappingsOf(parseSmaps(readFileSync('/proc/self/smaps', 'utf8')), ['libonnxruntime.so']),
  )
}

/** Every chunk's hey_jarvis score of the fixture clip, from a fresh start of the detector. */
async function scoresOf(d: OpenWakeWordDetector, into: number[][]): Promise<number[]> {
  into.length = 0
  d.reset()
  await d.scoreRecorded(CLIP)
  return into.map((s) => s[0] as number)
}

/**
 * The native runtime's library, touched across its file by the load, gives back its clean pages:
 * the process's resident pages of it fall, and the detector scores the same bits as before and as
 * a process that never gave them back.
 */
describe.skipIf(process.platform !== 'linux')('onnxruntime’s cold code pages given back', () => {
  let dir: string | undefined
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('its resident pages fall and the scores of a clip stay the same bits', async () => {
    const heard: number[][] = []
    const d = await pinnedDetector({
      onWake: () => {},
      phrases: [{ phrase: JARVIS.phrase, file: JARVIS.file, threshold: 0.5 }],
      onScores: (s) => heard.push([...s]),
    })
    try {
      // The embedding's streamed check settled: both runs below score in the same mode.
      await d.afterChunks(0)
      const before = await scoresOf(d, heard)
      expect(before.some((s) => s > 0.5)).toBe(true)
      const resident = ortResidentKb()
      const r = await releaseColdPages(NATIVE_LIBRARIES)
      const after = ortResidentKb()
      expect(r.released).toBe(true)
      if (!r.released) return
      expect(r.mappings).toBeGreaterThan(0)
      // Most of what the load touched is gone (measured here: ~23 MB → under 1 MB).
      expect(after).toBeLessThan(resident / 2)
      expect(r.afterKb).toBeLessThan(r.beforeKb / 2)

      const again = await scoresOf(d, heard)
      expect(again).toEqual(before)
      // What scoring runs came back (from the page cache), and not the load's one-off code.
      expect(ortResidentKb()).toBeLessThan(resident)

      // A process that never gave its pages back scores the clip the same.
      const child = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          `import { HEADS, pinnedDetector, wavPcm } from ${JSON.stringify(HELPERS)}
           const h = HEADS.find((x) => x.name === 'hey_jarvis')
           const scores = []
           const d = await pinnedDetector({ onWake() {}, phrases: [{ phrase: h.phrase, file: h.file, threshold: 0.5 }], onScores: (s) => scores.push(s[0]) })
           await d.afterChunks(0)
           d.reset()
           await d.scoreRecorded(wavPcm(h.clip))
           await d.close()
           process.stdout.write(JSON.stringify(scores))`,
        ],
        { encoding: 'utf8', cwd: join(import.meta.dirname, '../../..') },
      )
      expect(child.status, child.stderr).toBe(0)
      // JSON keeps a float32 score's double exactly.
      expect(JSON.parse(child.stdout)).toEqual(again)
    } finally {
      await d.close()
    }
  }, 120_000)

  it('says why when madvise refuses, and gives back nothing', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nocturn-smaps-'))
    const smaps = join(dir, 'smaps')
    // An address no page begins at: madvise answers EINVAL, whatever is mapped there.
    writeFileSync(
      smaps,
      '1001-3000 r-xp 00000000 fe:00 1 /opt/nocturn/libonnxruntime.so.1\nRss: 8 kB\nAnonymous: 0 kB\n',
    )
    const r = await releaseColdPages(['libonnxruntime.so'], smaps)
    expect(r).toEqual({ released: false, why: 'madvise refused (EINVAL, errno 22)' })
  })

  it('lets the event loop turn between its steps: what was due meanwhile runs before it ends', async () => {
    dir ??= mkdtempSync(join(tmpdir(), 'nocturn-smaps-'))
    const smaps = join(dir, 'smaps-own')
    writeFileSync(smaps, readFileSync('/proc/self/smaps', 'utf8'))
    const order: string[] = []
    // Due at the loop's next turn: a release done in one piece ends before it (inside a CPU
    // quota, one piece held the loop past the detector's backlog).
    setImmediate(() => order.push('the loop turned'))
    const r = await releaseColdPages(['libonnxruntime.so'], smaps)
    order.push('released')
    expect(r.released).toBe(true)
    expect(order).toEqual(['the loop turned', 'released'])
  })

  it('a session begun meanwhile holds its next step until it ends', async () => {
    dir ??= mkdtempSync(join(tmpdir(), 'nocturn-smaps-'))
    const smaps = join(dir, 'smaps-held')
    writeFileSync(smaps, readFileSync('/proc/self/smaps', 'utf8'))
    let sessionEnds!: () => void
    const held = new Promise<void>((r) => {
      sessionEnds = r
    })
    let asked = 0
    let done = false
    const release = releaseColdPages(['libonnxruntime.so'], smaps, () => {
      asked++
      return held
    }).then((r) => {
      done = true
      return r
    })
    // Many turns of the loop and a while: the release waits at its next step.
    for (let k = 0; k < 20; k++) await new Promise((r) => setImmediate(r))
    await new Promise((r) => setTimeout(r, 100))
    expect(asked).toBe(1)
    expect(done).toBe(false)
    sessionEnds()
    const r = await release
    expect(r.released).toBe(true)
    expect(asked).toBe(2)
  })

  it('a mapping refused leaves the others to give back, and both are counted', async () => {
    dir ??= mkdtempSync(join(tmpdir(), 'nocturn-smaps-'))
    const smaps = join(dir, 'smaps-partly')
    const refused =
      '1001-3000 r-xp 00000000 fe:00 1 /opt/nocturn/libonnxruntime.so.1\nRss: 8 kB\nAnonymous: 0 kB\n'
    // A first call loads koffi, whose library is given back with the rest.
    writeFileSync(smaps, refused)
    await releaseColdPages(['libonnxruntime.so'], smaps)
    // The refused one first, then this process's own mappings (koffi's library among them):
    // before, the first refusal ended the release and said none went.
    writeFileSync(smaps, refused + readFileSync('/proc/self/smaps', 'utf8'))
    const r = await releaseColdPages(['libonnxruntime.so'], smaps)
    expect(r.released).toBe(true)
    if (!r.released) return
    expect(r.mappings).toBeGreaterThan(0)
    expect(r.refused).toEqual({ mappings: 1, why: 'madvise refused (EINVAL, errno 22)' })
  })
})
