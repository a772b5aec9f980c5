import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CREDENTIALS } from '../../src/app/config/load.js'
import { missingCommands } from '../helpers/system.js'

const UNIT = join(import.meta.dirname, '..', '..', 'systemd', 'nocturn.service')

/** The unit's active directives (comments dropped), as [key, value] in order. */
function directives(): Array<[string, string]> {
  return readFileSync(UNIT, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#') && !l.startsWith('['))
    .map((l) => {
      const i = l.indexOf('=')
      return [l.slice(0, i), l.slice(i + 1)] as [string, string]
    })
}
const values = (key: string) =>
  directives()
    .filter(([k]) => k === key)
    .map(([, v]) => v)

describe('systemd/nocturn.service', () => {
  const skip = missingCommands('systemd-analyze')

  it.skipIf(skip)('passes systemd-analyze verify without a single warning', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-unit-'))
    copyFileSync(UNIT, join(dir, 'nocturn.service'))
    const r = spawnSync('systemd-analyze', ['verify', '--man=no', join(dir, 'nocturn.service')], {
      encoding: 'utf8',
    })
    // verify exits 0 even for an unknown key or a bad value; those show as lines on stderr.
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })

  it.skipIf(skip)('scores 1.5 or better in systemd-analyze security', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-unit-'))
    copyFileSync(UNIT, join(dir, 'nocturn.service'))
    const r = spawnSync(
      'systemd-analyze',
      ['security', '--offline=yes', '--no-pager', join(dir, 'nocturn.service')],
      { encoding: 'utf8' },
    )
    const score = /Overall exposure level for nocturn\.service: ([\d.]+)/.exec(r.stdout)?.[1]
    expect(score, r.stdout + r.stderr).toBeDefined()
    expect(Number(score)).toBeLessThanOrEqual(1.5)
  })

  it('has none of the options that break Node or hide the devices', () => {
    const keys = directives().map(([k]) => k)
    expect(keys).not.toContain('PrivateDevices') // a private /dev: no /dev/snd, no /dev/gpiochip*
    expect(keys).not.toContain('MemoryDenyWriteExecute') // V8's JIT: node aborts at start
    expect(keys).not.toContain('DynamicUser') // would need the groups and the state dir re-thought
  })

  it('is hardened, yet reaches ALSA and the GPIO chips', () => {
    expect(values('ProtectSystem')).toEqual(['strict'])
    expect(values('NoNewPrivileges')).toEqual(['yes'])
    expect(values('ProtectHome')).toEqual(['yes'])
    expect(values('DevicePolicy')).toEqual(['closed'])
    expect(values('DeviceAllow')).toEqual(['char-alsa rw', 'char-gpiochip rw', 'char-spi rw'])
    expect(values('SupplementaryGroups')[0]?.split(/\s+/)).toEqual(['audio', 'gpio', 'spi'])
    expect(values('User')).toEqual(['nocturn'])
  })

  it('keeps state in StateDirectory, restarts on failure, and hands secrets over as credentials', () => {
    expect(values('StateDirectory')).toEqual(['nocturn'])
    expect(values('Restart')).toEqual(['on-failure'])
    const creds = values('LoadCredential').map((v) => v.split(':')[0])
    // The names the config loader looks for under $CREDENTIALS_DIRECTORY.
    expect(creds.sort()).toEqual([CREDENTIALS.apiKey, CREDENTIALS.mqttPassword].sort())
    expect(values('ExecStart')[0]).toMatch(/cli\.js run --config \/etc\/nocturn\/config\.json$/)
  })

  it('keeps glibc to one malloc arena, which only the environment can set (the memory budget)', () => {
    expect(values('Environment').join(' ').split(/\s+/)).toContain('MALLOC_ARENA_MAX=1')
  })

  it("keeps Node's compiled code where the service may write it (CacheDirectory)", () => {
    const cache = values('Environment')
      .join(' ')
      .split(/\s+/)
      .find((v) => v.startsWith('NODE_COMPILE_CACHE='))
      ?.slice('NODE_COMPILE_CACHE='.length)
    // ProtectSystem=strict leaves only the unit's own directories writable.
    expect(values('CacheDirectory')).toEqual(['nocturn'])
    expect(cache?.startsWith('/var/cache/nocturn/')).toBe(true)
  })

  it('the install script is valid bash', () => {
    const r = spawnSync('bash', [
      '-n',
      join(import.meta.dirname, '..', '..', 'systemd', 'install.sh'),
    ])
    expect(r.status).toBe(0)
  })
})
