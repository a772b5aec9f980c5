import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { resolvePanel } from '../../src/app/config/load.js'
import { panelSchema } from '../../src/app/config/schema.js'
import { checkPanel } from '../../src/app/panel-check.js'
import { createPanel } from '../../src/app/panel-factory.js'
import { silentLogger } from '../../src/core/logger.js'
import { NullPanel } from '../../src/panel/null-panel.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { type FakeGpiod, fakeGpiod } from '../helpers/fake-gpiod.js'

function board(opts: { chips?: boolean; sysfsBase?: number }): string {
  const root = mkdtempSync(join(tmpdir(), 'nocturn-board-'))
  mkdirSync(join(root, 'dev'))
  if (opts.chips) writeFileSync(join(root, 'dev', 'gpiochip0'), '')
  if (opts.sysfsBase !== undefined) {
    const chip = join(root, 'sys', 'class', 'gpio', `gpiochip${opts.sysfsBase}`)
    mkdirSync(chip, { recursive: true })
    writeFileSync(join(chip, 'label'), 'pinctrl-bcm2711\n')
    writeFileSync(join(chip, 'base'), `${opts.sysfsBase}\n`)
  }
  return root
}

const panel = (p: object) => resolvePanel(panelSchema.parse(p))
let fake: FakeGpiod | undefined
afterEach(() => fake?.cleanup())

describe('checkPanel: which GPIO backend this board needs', () => {
  it('Pi OS Bookworm, kernel 6.6, chips present: gpiod, and rpi-gpio fails with the fix "use gpiod"', async () => {
    fake = fakeGpiod(1)
    const r = await checkPanel({
      root: board({ chips: true, sysfsBase: 512 }),
      kernelRelease: '6.6.20+rpt-rpi-v8',
      env: fake.env,
      panel: panel({ backend: 'rpi-gpio', preset: 'respeaker-2mic' }),
    })
    expect(r.recommended).toBe('gpiod')
    expect(r.kernelAtLeast66).toBe(true)
    expect(r.libgpiod).toBe(1)
    const backend = r.checks.find((c) => c.name === 'panel backend')
    expect(backend?.status).toBe('fail')
    expect(backend?.detail).toMatch(/EINVAL/)
    expect(backend?.fix).toBe(
      'use gpiod: set panel.backend to "gpiod" and install gpiod (sudo apt install gpiod)',
    )
    expect(r.checks.find((c) => c.name === 'sysfs gpio')?.detail).toMatch(/GPIO17 is 529 there/)
  })

  it('checks the configured pins by name with the 2.x tools', async () => {
    fake = fakeGpiod(2)
    const r = await checkPanel({
      root: board({ chips: true }),
      kernelRelease: '6.12.1',
      env: fake.env,
      panel: panel({ backend: 'gpiod', button: 'GPIO17', led: 'GPIO26' }),
    })
    expect(r.libgpiod).toBe(2)
    expect(r.checks.find((c) => c.name === 'panel.button')?.status).toBe('ok')
    const led = r.checks.find((c) => c.name === 'panel.led')
    expect(led).toMatchObject({ status: 'fail', detail: 'no GPIO line called GPIO26' })
    expect(r.ok).toBe(false)
  })

  it('an old kernel with only sysfs: rpi-gpio; nothing at all: none', async () => {
    fake = fakeGpiod(1)
    const old = await checkPanel({
      root: board({ sysfsBase: 0 }),
      kernelRelease: '6.1.21-v8+',
      env: fake.env,
    })
    expect(old.recommended).toBe('rpi-gpio')
    expect(old.kernelAtLeast66).toBe(false)
    const nothing = await checkPanel({
      root: board({}),
      kernelRelease: '6.18.44',
      env: { PATH: '/nonexistent' },
    })
    expect(nothing.recommended).toBe('none')
    expect(nothing.checks.find((c) => c.name === 'libgpiod tools')).toMatchObject({
      status: 'warn',
      fix: 'sudo apt install gpiod',
    })
    expect(nothing.ok).toBe(true)
  })

  it('a gpiod backend on a board without chips is a failure with the fix', async () => {
    const r = await checkPanel({
      root: board({}),
      kernelRelease: '6.6.1',
      env: { PATH: '/nonexistent' },
      panel: panel({ backend: 'gpiod', preset: 'aiy-voice-hat' }),
    })
    expect(r.checks.find((c) => c.name === 'panel backend')).toMatchObject({
      status: 'fail',
      fix: 'set panel.backend to "none"',
    })
  })
})

describe('createPanel', () => {
  it('builds the configured backend, loading only its module', async () => {
    const deps = { clock: new VirtualClock(), logger: silentLogger }
    expect(await createPanel(panel({ backend: 'none' }), deps)).toBeInstanceOf(NullPanel)
    const g = await createPanel(panel({ backend: 'gpiod', preset: 'aiy-voice-hat' }), deps)
    expect(g.constructor.name).toBe('GpiodPanel')
    const s = await createPanel(panel({ backend: 'rpi-gpio', button: 'GPIO17' }), deps)
    expect(s.constructor.name).toBe('SysfsPanel')
  })
})
