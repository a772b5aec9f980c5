import { execFileSync, spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const INSTALL = join(ROOT, 'systemd', 'install.sh')

/** Bytes under `dir`, as du counts them (apparent size, so sparse or shared blocks don't hide any). */
function duBytes(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0])
}

describe('systemd/install.sh into a DESTDIR (no root needed)', () => {
  it('produces a lean /opt/nocturn: production dependencies only, and it runs', () => {
    if (!existsSync(join(ROOT, 'dist', 'service', 'cli.js'))) {
      execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'ignore' })
    }
    const dest = mkdtempSync(join(tmpdir(), 'nocturn-install-'))
    const r = spawnSync('bash', [INSTALL], {
      cwd: ROOT,
      env: { ...process.env, DESTDIR: dest },
      encoding: 'utf8',
    })
    expect(r.status, r.stderr).toBe(0)
    const opt = join(dest, 'opt', 'nocturn')
    // What the README's path used to ship: 240 MB with the development tools; these must be gone.
    for (const dev of ['typescript', '@biomejs/biome', 'vitest', 'tsx', 'rolldown', 'vite']) {
      expect(existsSync(join(opt, 'node_modules', dev)), dev).toBe(false)
    }
    for (const prod of ['better-sqlite3', '@google/genai', 'mqtt', 'zod', 'ws']) {
      expect(existsSync(join(opt, 'node_modules', prod)), prod).toBe(true)
    }
    // The wake word's runtimes keep only this board's native library and Node's one WASM build.
    const ortBin = join(opt, 'node_modules', 'onnxruntime-node', 'bin', 'napi-v6')
    expect(readdirSync(ortBin)).toEqual(['linux'])
    expect(readdirSync(join(ortBin, 'linux'))).toEqual([process.arch])
    expect(readdirSync(join(opt, 'node_modules', 'onnxruntime-web', 'dist')).sort()).toEqual([
      'ort-wasm-simd-threaded.mjs',
      'ort-wasm-simd-threaded.wasm',
      'ort.node.min.js',
      'ort.node.min.mjs',
    ])
    const runtimesMb =
      (duBytes(join(opt, 'node_modules', 'onnxruntime-node')) +
        duBytes(join(opt, 'node_modules', 'onnxruntime-web'))) /
      1e6
    const mb = duBytes(opt) / 1e6
    process.stdout.write(
      `/opt/nocturn: ${mb.toFixed(0)} MB, of which the wake-word runtimes ${runtimesMb.toFixed(0)} MB\n`,
    )
    expect(r.stdout).toMatch(/MB the wake-word runtimes for /)
    // What it was before the wake word (~80 MB) plus this board's runtimes, and no more.
    expect(mb - runtimesMb).toBeLessThan(120)
    expect(runtimesMb).toBeLessThan(70)
    // Both runtimes load from what was installed (the model files are the household's, not here).
    for (const pkg of ['onnxruntime-node', 'onnxruntime-web']) {
      const load = spawnSync(
        process.execPath,
        ['-e', `require(${JSON.stringify(pkg)}).InferenceSession.create || process.exit(3)`],
        { cwd: opt, encoding: 'utf8' },
      )
      expect(load.status, `${pkg}: ${load.stderr}`).toBe(0)
    }
    // It runs from there with nothing but what was installed.
    const help = spawnSync(process.execPath, [join(opt, 'dist', 'app', 'cli.js'), '--help'], {
      cwd: opt,
      encoding: 'utf8',
    })
    expect(help.status, help.stderr).toBe(0)
    expect(help.stdout).toMatch(/usage: nocturn/)
    // `nocturn demo` plays the whole scene from the installed copy (it once hung there: the fake
    // model's spoken replies were not installed, so it never spoke).
    const demo = spawnSync(
      process.execPath,
      [join(opt, 'dist', 'app', 'cli.js'), 'demo', '--listen', 'speech'],
      { cwd: tmpdir(), encoding: 'utf8', timeout: 120_000 },
    )
    expect(demo.status, demo.stdout.slice(-1500)).toBe(0)
    expect(demo.stdout).toContain('[nocturn] The front door is unlocked.')
    // The unit runs the node this install found; the config was written from the example.
    const unit = readFileSync(join(dest, 'etc', 'systemd', 'system', 'nocturn.service'), 'utf8')
    expect(unit).toMatch(/^ExecStart=\S*node \/opt\/nocturn\/dist\/service\/cli\.js run /m)
    // What the unit starts runs from there too (the bundle's packages are the installed ones).
    const service = spawnSync(
      process.execPath,
      [join(opt, 'dist', 'service', 'cli.js'), 'run', '--config', join(dest, 'nowhere.json')],
      { cwd: opt, encoding: 'utf8' },
    )
    expect(service.status, service.stderr).toBe(2)
    expect(service.stderr).toMatch(/nowhere\.json/)
    expect(existsSync(join(dest, 'etc', 'nocturn', 'config.json'))).toBe(true)
    // The configuration listens for "hey jarvis", and its model is where the configuration looks,
    // with the licence said as it was installed.
    const config = readFileSync(join(dest, 'etc', 'nocturn', 'config.json'), 'utf8')
    expect(config).toMatch(/"mode": "wake"/)
    expect(config).toMatch(/"models": \[\{ "model": "hey_jarvis" \}\]/)
    expect(readdirSync(join(dest, 'var', 'lib', 'nocturn', 'wake')).sort()).toEqual([
      'embedding_model.onnx',
      'hey_jarvis_v0.1.onnx',
      'melspectrogram.onnx',
    ])
    expect(r.stdout).toMatch(/CC BY-NC-SA 4\.0/)
  }, 300_000)

  it('refuses Node 18 (what bookworm ships) and says how to get a supported one', () => {
    const bin = mkdtempSync(join(tmpdir(), 'nocturn-old-node-'))
    mkdirSync(bin, { recursive: true })
    // A stand-in for bookworm's node: answers the version question as 18.19 does.
    writeFileSync(join(bin, 'node'), '#!/bin/sh\necho 18.19.0\n')
    chmodSync(join(bin, 'node'), 0o755)
    const dest = mkdtempSync(join(tmpdir(), 'nocturn-install-'))
    const r = spawnSync('bash', [INSTALL], {
      cwd: ROOT,
      env: { ...process.env, DESTDIR: dest, PATH: `${bin}:${process.env.PATH ?? ''}` },
      encoding: 'utf8',
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/Node 18\.19\.0 is too old: Nocturn needs Node 20 or later/)
    expect(r.stderr).toMatch(/trixie: +sudo apt install nodejs npm/)
    expect(r.stderr).toMatch(/bookworm: .*NodeSource/)
    expect(existsSync(join(dest, 'opt'))).toBe(false)
  })
})
