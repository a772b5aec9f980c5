import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { mappingsOf, parseSmaps, residentKb } from '../../src/adapters/libc/smaps.js'
import { wavHeader } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { startNocturnRun, writeRunConfig } from '../helpers/nocturn-process.js'
import { MODEL_DIR } from '../helpers/wake.js'

/** What the process `pid` holds resident of onnxruntime's native library, in kB. */
function ortResidentKb(pid: number): number {
  const smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8')
  return residentKb(mappingsOf(parseSmaps(smaps), ['libonnxruntime.so']))
}

/**
 * `nocturn run` in wake mode on the native runtime gives back onnxruntime's cold code pages once
 * the detector's load has settled (app/compose/cold-pages.ts): its resident pages of the library,
 * read from outside, fall, and it goes on listening.
 */
describe.skipIf(process.platform !== 'linux')(
  'a wake-mode speaker gives back cold code pages',
  () => {
    const closers: (() => Promise<unknown> | unknown)[] = []
    afterEach(async () => {
      for (const c of closers.splice(0).reverse()) await Promise.resolve(c()).catch(() => {})
    })

    it('says how much, and its resident pages of onnxruntime fall', async () => {
      const work = mkdtempSync(join(tmpdir(), 'nocturn-cold-run-'))
      closers.push(() => rmSync(work, { recursive: true, force: true }))
      const silence = new Uint8Array(16_000 * 2 * 60)
      writeFileSync(
        join(work, 'silence.wav'),
        Buffer.concat([wavHeader(16_000, silence.length), silence]),
      )
      const server = await FakeLiveServer.start({ scripts: [], logger: silentLogger })
      closers.push(() => server.close())
      const config = writeRunConfig(
        work,
        { baseUrl: server.baseUrl, inputWav: join(work, 'silence.wav'), brokerUrl: '' },
        {
          mqtt: undefined,
          panel: { backend: 'none' },
          listen: {
            wake: { models: [{ model: 'hey_jarvis' }], modelDir: MODEL_DIR, runtime: 'native' },
          },
        },
      )
      const nocturn = startNocturnRun(config, { apiKey: 'cold-pages-key' })
      closers.push(() => nocturn.stop('SIGKILL'))
      const pid = nocturn.child.pid as number
      await nocturn.waitForLine(
        'listening',
        (l) => l.msg === 'listening for the wake phrase',
        60_000,
      )
      // Every session made and the prefill scored: the load's touch across the library is resident.
      const loaded = ortResidentKb(pid)
      expect(loaded).toBeGreaterThan(10 * 1024)
      const said = await nocturn.waitForLine(
        'the release',
        (l) => l.coldPages === 'released' || l.coldPages === 'kept',
        60_000,
      )
      expect(said).toMatchObject({ coldPages: 'released' })
      expect(said.afterMb as number).toBeLessThan(said.beforeMb as number)
      expect(ortResidentKb(pid)).toBeLessThan(loaded / 2)
      // Its mark (beside the store) goes once scoring survived the release.
      await nocturn.waitFor('the mark gone', () => !existsSync(join(work, 'wake-release-starting')))
      expect(nocturn.saw('wake_release_crashed')).toBe(false)
    }, 120_000)
  },
)
