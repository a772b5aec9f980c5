import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { wakeSchema } from '../../src/app/config/wake-schema.js'
import { createWakeDetector } from '../../src/app/wake-detector.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { MODEL_DIR } from '../helpers/wake.js'

const guard = join(import.meta.dirname, '../../src/app/native-guard.ts')
const wake = wakeSchema.parse({ models: [{ model: 'hey_jarvis' }], modelDir: MODEL_DIR })

/**
 * A native runtime that takes the whole process down (a signal, not an exception) at its first
 * use: the next start listens through WASM and says why, instead of crashing again until systemd
 * gives up on the speaker (app/native-guard.ts).
 */
describe('a start that died in the native wake-word runtime', () => {
  let dir: string
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('leaves its mark; the next start listens through WASM and says why; without the mark, native again and the mark gone', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nocturn-guard-'))
    const mark = join(dir, 'wake-native-starting')
    // A process that dies by SIGSEGV between the mark and the end of the native load.
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { guardNativeRuntime } from ${JSON.stringify(guard)}
         const g = guardNativeRuntime(${JSON.stringify(mark)}, 'auto', { warn() {} })
         if (g.runtime !== 'wasm') process.kill(process.pid, 'SIGSEGV')`,
      ],
      { encoding: 'utf8' },
    )
    expect(child.signal).toBe('SIGSEGV')
    expect(existsSync(mark)).toBe(true)

    const log = new MemoryLogger()
    const d = await createWakeDetector(wake, { onWake: () => {}, logger: log, nativeMark: mark })
    try {
      expect(d.runtime).toBe('wasm')
      // And it listens: the detector scores on that runtime.
      await d.scoreRecorded(new Uint8Array(32_000))
      expect(d.stats().chunksScored).toBeGreaterThan(10)
    } finally {
      await d.close()
    }
    const said = log.withEvent('wake_native_crashed')
    expect(said).toHaveLength(1)
    expect(said[0]?.msg).toContain(`delete ${mark}`)
    expect(existsSync(mark)).toBe(true)

    rmSync(mark)
    const again = await createWakeDetector(wake, {
      onWake: () => {},
      logger: log,
      nativeMark: mark,
    })
    await again.close()
    expect(again.runtime).toBe('native')
    expect(existsSync(mark)).toBe(false)
  }, 60_000)

  it('a load that fails with an error (a missing model) is no crash: no mark is left', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nocturn-guard-'))
    const mark = join(dir, 'wake-native-starting')
    const missing = wakeSchema.parse({ models: [{ model: 'hey_jarvis' }], modelDir: dir })
    await expect(
      createWakeDetector(missing, {
        onWake: () => {},
        logger: new MemoryLogger(),
        nativeMark: mark,
      }),
    ).rejects.toMatchObject({ code: 'NOC_ERR_WAKE_MODEL_MISSING' })
    expect(existsSync(mark)).toBe(false)
  })
})
