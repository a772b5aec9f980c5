import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parsePcmList } from '../../src/adapters/alsa/alsa-devices.js'
import { hermeticAlsa } from '../helpers/alsa.js'
import { missingCommands } from '../helpers/system.js'

const ROOT = join(import.meta.dirname, '..', '..')

describe('nocturn devices', () => {
  it('parses `aplay -L` output: names with their indented descriptions', () => {
    expect(
      parsePcmList(
        'null\n    Discard all samples\nplughw:CARD=seeed2micvoicec,DEV=0\n    seeed\n    Hardware device\n',
      ),
    ).toEqual([
      { name: 'null', description: 'Discard all samples' },
      { name: 'plughw:CARD=seeed2micvoicec,DEV=0', description: 'seeed — Hardware device' },
    ])
  })

  it.skipIf(missingCommands('arecord', 'aplay'))(
    'lists the ALSA PCMs of the configuration by name, through the real command',
    () => {
      const alsa = hermeticAlsa(new Uint8Array(640))
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/app/cli.ts', 'devices'], {
        cwd: ROOT,
        env: alsa.env,
        encoding: 'utf8',
      })
      expect(r.status).toBe(0)
      expect(r.stdout).toContain('capture (alsa):\n  nocturn_cap  — Nocturn test capture (file)\n')
      expect(r.stdout).toMatch(
        /playback \(alsa\):\n(.*\n)* {2}nocturn_play {2}— Nocturn test playback/,
      )
    },
  )
})
