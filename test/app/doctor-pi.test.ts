import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/app/config/load.js'
import { nodeCheck } from '../../src/app/doctor/node-check.js'
import { spiCheck } from '../../src/app/doctor/spi-check.js'

const base = { env: {}, configPath: undefined, configError: undefined }

describe('doctor on a Pi: Node and SPI', () => {
  it('refuses Node 18 (what bookworm ships) with the fix for each Pi OS release', async () => {
    const r = await nodeCheck.run({ ...base, loaded: undefined, nodeVersion: '18.19.0' })
    expect(r.status).toBe('fail')
    expect(r.summary).toMatch(/Node 18\.19\.0 is too old: Nocturn needs Node 20/)
    expect(r.details?.join('\n')).toMatch(/trixie.*apt install nodejs.*Bookworm.*NodeSource/s)
    const ok = await nodeCheck.run({ ...base, loaded: undefined, nodeVersion: '20.19.0' })
    expect(ok.status).toBe('ok')
  })

  function respeaker(device: string) {
    return parseConfig(
      JSON.stringify({
        audio: { backend: 'wav', inputWav: '/tmp/in.wav', outputWav: '/tmp/out.wav' },
        panel: { backend: 'gpiod', preset: 'respeaker-2mic', rgbLeds: { device } },
      }),
      'test config',
      { GEMINI_API_KEY: 'k' },
    )
  }

  it('SPI off: says the device is missing and to add dtparam=spi=on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-boot-'))
    const boot = join(dir, 'config.txt')
    writeFileSync(boot, '[all]\ndtoverlay=wm8960-soundcard\n#dtparam=spi=on\n')
    const r = await spiCheck.run({
      ...base,
      loaded: respeaker(join(dir, 'spidev0.1')),
      bootConfigPaths: [boot],
    })
    expect(r.status).toBe('fail')
    expect(r.details?.join('\n')).toContain(`${boot}: no dtparam=spi=on`)
    expect(r.details?.join('\n')).toContain(`fix: add dtparam=spi=on to ${boot}`)
  })

  it('SPI on but not rebooted yet; and no LEDs configured: skipped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-boot-'))
    const boot = join(dir, 'config.txt')
    writeFileSync(boot, 'dtparam=i2c_arm=on,spi=on\n')
    const r = await spiCheck.run({
      ...base,
      loaded: respeaker(join(dir, 'spidev0.1')),
      bootConfigPaths: [boot],
    })
    expect(r.details?.join('\n')).toMatch(/dtparam=spi=on\n.*reboot/)
    const none = await spiCheck.run({ ...base, loaded: undefined })
    expect(none.status).toBe('skip')
  })
})
