import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { expect, it } from 'vitest'
import { runOffline } from '../../src/app/offline-run.js'
import { silentLogger } from '../../src/core/logger.js'

const ROOT = join(import.meta.dirname, '../..')

it('the offline run with --provider openai plays the household scene whole over the real openai package and the fake Realtime service', async () => {
  const out = new PassThrough()
  let text = ''
  out.on('data', (c: Buffer) => {
    text += c.toString()
  })
  const code = await runOffline({
    out,
    logger: silentLogger,
    root: ROOT,
    workDir: mkdtempSync(join(tmpdir(), 'nocturn-offline-openai-')),
    listen: 'speech',
    provider: 'openai',
  })
  expect(code, text).toBe(0)
  let at = 0
  for (const line of [
    '[person]  Please unlock the front door for the plumber.',
    '[tool]    intent__HassTurnOff called',
    `call-1: output {"status":"waiting_for_approval","approver":"Anna's phone","action":"Unlock Front Door — Hall"}`,
    'Anna taps Approve on "Unlock Front Door — Hall"',
    '[house]   Home Assistant runs lock.unlock on lock.front_door',
    '[house]   lock.front_door: locked → unlocked',
    'call-1_final: output {"output":{"done":true,"confirmed":true,"states":{"lock.front_door":"unlocked"},"result":"Front Door is unlocked."}}',
    '[nocturn] The front door is unlocked.',
    '[person]  And open the garage.',
    `[phone]   Anna's phone shows: "Open Garage Door — Garage"`,
    '[person]  And the kitchen light on, please.',
    '[house]   Home Assistant runs homeassistant.turn_on on light.kitchen',
    '[house]   light.kitchen: off → on',
    'call-3: output {"output":{"done":true,',
    '[speaker] dropped at once:',
    '[model←]  truncate',
    '[button]  short press: mute',
    '[phone]   request withdrawn',
    '[session] closed (stopped): 6 turns; tool calls 2 answered, 1 withdrawn',
    '[nocturn] You are welcome. Anna approved the front door on her phone; the garage stayed shut.',
  ]) {
    const i = text.indexOf(line, at)
    expect(i, `"${line}" after position ${at} in:\n${text}`).toBeGreaterThan(-1)
    at = i + line.length
  }
  expect(text).not.toContain('did not play as scripted')
  // Anna's phone was asked twice, the door and the garage; never about the light.
  expect(text.split("[phone]   Anna's phone shows:").length - 1).toBe(2)
})

it('nocturn demo takes --provider gemini or openai and refuses anything else', () => {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/app/cli.ts', 'demo', '--provider', 'anthropic'],
    { cwd: ROOT, encoding: 'utf8' },
  )
  expect(r.status).toBe(2)
  expect(r.stderr).toContain('--provider takes "gemini" (the default) or "openai"')
})
