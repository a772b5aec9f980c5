import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import {
  sha256File,
  verifierRecord,
  writeVerifier,
} from '../../src/adapters/openwakeword/verifier.js'
import { EMBEDDING, HEADS, MEL } from '../helpers/wake.js'

const ROOT = join(import.meta.dirname, '..', '..')
const run = promisify(execFile)

interface Report {
  checks: { name: string; status: string; summary: string; details?: string[]; data?: unknown }[]
}

/** `nocturn doctor --json` on a config with `listen.wake`; the wake word's check. */
async function wakeCheck(
  wake: Record<string, unknown>,
  o: { crashedBefore?: boolean; releaseCrashed?: boolean } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-doctor-wake-'))
  // The mark a start leaves when it died in the native runtime (app/native-guard.ts).
  if (o.crashedBefore) writeFileSync(join(dir, 'wake-native-starting'), '2026-12-02T13:57:06Z\n')
  // …and when it died after giving back the runtime's cold code pages (compose/cold-pages.ts).
  if (o.releaseCrashed) writeFileSync(join(dir, 'wake-release-starting'), '2026-12-06T12:40:00Z\n')
  const config = join(dir, 'config.json')
  writeFileSync(
    config,
    JSON.stringify({
      audio: { backend: 'wav', inputWav: join(dir, 'in.wav') },
      store: { path: join(dir, 'n.db') },
      phonesDir: join(dir, 'phones'),
      phoneApp: { enabled: false },
      listen: { wake },
    }),
  )
  const r = await run(
    process.execPath,
    ['--import', 'tsx', 'src/app/cli.ts', 'doctor', '--config', config, '--json'],
    { cwd: ROOT, env: { ...process.env, GEMINI_API_KEY: '' } },
  ).catch((e: { stdout: string }) => e)
  const report = JSON.parse(r.stdout) as Report
  const check = report.checks.find((c) => c.name === 'wake word')
  if (!check) throw new Error(`no wake word check in ${r.stdout}`)
  return check
}

function modelDir(withHead: boolean): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'nocturn-wake-models-')), 'wake')
  mkdirSync(dir)
  copyFileSync(MEL, join(dir, 'melspectrogram.onnx'))
  copyFileSync(EMBEDDING, join(dir, 'embedding_model.onnx'))
  if (withHead) copyFileSync(HEADS[0]?.file ?? '', join(dir, 'hey_jarvis_v0.1.onnx'))
  return dir
}

describe('nocturn doctor: the wake word', () => {
  it('loads the runtime and the models and measures that scoring keeps up with real time', async () => {
    const check = await wakeCheck({ models: [{ model: 'hey_jarvis' }], modelDir: modelDir(true) })
    expect(check.status, check.summary).toBe('ok')
    const data = check.data as { runtime: string; shareOfRealTime: number; phrases: string[] }
    expect(data.runtime).toBe('native')
    expect(data.phrases).toEqual(['hey jarvis'])
    expect(data.shareOfRealTime).toBeGreaterThan(0)
    expect(data.shareOfRealTime).toBeLessThan(0.5)
    expect(check.summary).toMatch(/"hey jarvis" on the native runtime: loaded in \d+ ms/)
    expect(check.summary).toContain(
      '"hey jarvis": no household verifier (nocturn wake enroll), threshold 0.5 (low 0.9, high 0.3)',
    )
  }, 60_000)

  it('after a start that died in the native runtime: WASM, a warning, and how to try native again', async () => {
    const check = await wakeCheck(
      { models: [{ model: 'hey_jarvis' }], modelDir: modelDir(true) },
      { crashedBefore: true },
    )
    expect(check.status, check.summary).toBe('warn')
    expect((check.data as { runtime: string }).runtime).toBe('wasm')
    expect(check.summary).toContain('the native runtime crashed at an earlier start')
    expect(check.details?.[0]).toMatch(
      /^delete .*wake-native-starting to try the native runtime again/,
    )
  }, 60_000)

  it('after a start that died giving back the cold code pages: a warning, and how to give them back again', async () => {
    const check = await wakeCheck(
      { models: [{ model: 'hey_jarvis' }], modelDir: modelDir(true), runtime: 'native' },
      { releaseCrashed: true },
    )
    expect(check.status, check.summary).toBe('warn')
    expect(check.summary).toContain("giving back onnxruntime's cold code pages")
    expect(check.details?.[0]).toMatch(/^delete .*wake-release-starting to give them back again/)
  }, 60_000)

  it('names the household verifier and what enrolment measured; a broken one fails, naming it', async () => {
    const dir = modelDir(true)
    const file = join(dir, 'hey_jarvis_v0.1.verifier.json')
    writeVerifier(
      file,
      verifierRecord({
        phrase: 'hey jarvis',
        head: 'hey_jarvis_v0.1.onnx',
        headSha256: sha256File(join(dir, 'hey_jarvis_v0.1.onnx')),
        window: 16,
        gate: 0.1,
        model: { weights: new Float64Array(16 * 96), bias: 0 },
        enrolment: {
          at: '2026-12-02T06:00:00.000Z',
          clips: 8,
          positiveWindows: 200,
          negativeWindows: 900,
          leaveOneOutAccepted: 7,
          negativesAccepted: 0,
          negativesChecked: 12,
        },
      }),
    )
    let check = await wakeCheck({ models: [{ model: 'hey_jarvis' }], modelDir: dir })
    expect(check.status, check.summary).not.toBe('fail')
    expect(check.summary).toContain(
      `"hey jarvis": household verifier ${file}, enrolled 2026-12-02T06:00:00.000Z from 8 clips (7 accepted left out), threshold 0.7 (low 0.8, high 0.42)`,
    )
    writeFileSync(file, '{ "kind": "nocturn-wake-verifier", "version": 1 }')
    check = await wakeCheck({ models: [{ model: 'hey_jarvis' }], modelDir: dir })
    expect(check.status).toBe('fail')
    expect(check.summary).toContain(file)
    expect(check.summary).toContain('nocturn wake enroll')
  }, 120_000)

  it('a missing head fails, naming the file and the install command', async () => {
    const dir = modelDir(false)
    const check = await wakeCheck({ models: [{ model: 'hey_jarvis' }], modelDir: dir })
    expect(check.status).toBe('fail')
    expect(check.summary).toContain(join(dir, 'hey_jarvis_v0.1.onnx'))
    expect(check.details?.join('\n')).toContain(`nocturn wake install <name>`)
    expect(check.details?.join('\n')).toContain(`--dir ${dir}`)
  }, 60_000)

  it('a model of the wrong shape fails with its file named', async () => {
    const dir = modelDir(false)
    const check = await wakeCheck({ models: [{ model: EMBEDDING }], modelDir: dir })
    expect(check.status).toBe('fail')
    expect(check.summary).toContain(EMBEDDING)
    expect((check.data as { code: string }).code).toBe('NOC_ERR_WAKE_MODEL_SHAPE')
  }, 60_000)
})
