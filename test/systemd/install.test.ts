import { execFileSync, spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { grantTraverse, REQUIRE_SYSTEM, systemEnv } from '../helpers/system.js'

const ROOT = join(import.meta.dirname, '..', '..')
const INSTALL = join(ROOT, 'systemd', 'install.sh')

/** Bytes under `dir`, as du counts them (apparent size, so sparse or shared blocks don't hide any). */
function duBytes(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0])
}

/**
 * Why another user cannot be tried here (the install runs as the test's user: only root can run
 * something as nobody), or undefined when it can. Under NOCTURN_REQUIRE_SYSTEM=1 it throws instead.
 */
function noOtherUser(): string | undefined {
  const runuser = spawnSync('sh', ['-c', 'command -v runuser'], { env: systemEnv() }).status === 0
  const why =
    process.getuid?.() !== 0
      ? 'not root'
      : runuser
        ? undefined
        : 'runuser not installed (util-linux)'
  if (why === undefined) return undefined
  const reason = `skipped: running the installed program as another user (${why})`
  if (REQUIRE_SYSTEM) throw new Error(`NOCTURN_REQUIRE_SYSTEM=1 but ${reason.slice(9)}`)
  process.stdout.write(`${reason}\n`)
  return reason
}

describe('systemd/install.sh into a DESTDIR (no root needed)', () => {
  it('produces a lean /opt/nocturn: production dependencies only, and it runs', () => {
    const dest = mkdtempSync(join(tmpdir(), 'nocturn-install-'))
    const r = spawnSync('bash', [INSTALL], {
      cwd: ROOT,
      env: { ...process.env, DESTDIR: dest },
      encoding: 'utf8',
    })
    expect(r.status, r.stderr).toBe(0)
    const opt = join(dest, 'opt', 'nocturn')
    // The service runs as nocturn, not as the owner of these files: everything is readable by
    // others and every folder can be entered (the stage's 0700 once became /opt/nocturn's).
    expect((statSync(opt).mode & 0o777).toString(8)).toBe('755')
    const find = (...test: string[]) =>
      execFileSync('find', [opt, ...test], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
    expect(find('!', '-perm', '-o+r')).toEqual([])
    expect(find('-type', 'd', '!', '-perm', '-o+x')).toEqual([])
    // …and writable by its owner alone: the service cannot change its own program.
    expect(find('!', '-type', 'l', '-perm', '/go+w')).toEqual([])
    // The compiler's incremental notes stay in the checkout.
    expect(readdirSync(join(opt, 'dist')).filter((f) => f.endsWith('.tsbuildinfo'))).toEqual([])
    // The state folder has the unit's StateDirectoryMode (a real install gives it to nocturn).
    expect((statSync(join(dest, 'var', 'lib', 'nocturn')).mode & 0o777).toString(8)).toBe('750')
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
    // koffi, which gives back the native runtime's cold code pages, with its prebuilt library for
    // this board (its platform package, kept by the prune: an optional dependency).
    const koffi = spawnSync(
      process.execPath,
      ['-e', `require('koffi').load(null).func('int madvise(uintptr_t a, size_t n, int advice)')`],
      { cwd: opt, encoding: 'utf8' },
    )
    expect(koffi.status, `koffi: ${koffi.stderr}`).toBe(0)
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
    // Both, as a user who owns none of it (the `nocturn` command of the installer's next steps,
    // and the unit's ExecStart). The link in usr/local/bin points at /opt, so the files are named.
    if (noOtherUser() === undefined) {
      grantTraverse(dest) // mkdtemp's 0700 would stop nobody before /opt (not opt itself: tested)
      const asNobody = (...args: string[]) =>
        spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, ...args], {
          cwd: tmpdir(),
          env: systemEnv(),
          encoding: 'utf8',
        })
      const cli = asNobody(join(opt, 'bin', 'nocturn.js'), '--help')
      expect(cli.status, cli.stderr).toBe(0)
      expect(cli.stdout).toMatch(/usage: nocturn/)
      const run = asNobody(
        join(opt, 'dist', 'service', 'cli.js'),
        'run',
        '--config',
        join(dest, 'nowhere.json'),
      )
      expect(run.status, run.stderr).toBe(2)
      expect(run.stderr).toMatch(/nowhere\.json does not exist/)
      // The installed demo, as any user: /opt is not writable, so it keeps its store elsewhere.
      const demo = asNobody(join(opt, 'bin', 'nocturn.js'), 'demo', '--listen', 'speech')
      expect(demo.status, demo.stdout + demo.stderr).toBe(0)
      // The store is shown relative to where it ran (the temporary directory).
      expect(demo.stdout).toMatch(/transcripts show \S+ --store nocturn-offline-\w+\/nocturn\.db/)
      expect(existsSync(join(opt, 'var'))).toBe(false)
    }
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
