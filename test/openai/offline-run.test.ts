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
    '[tool]    unlock_front_door called',
    `call-1: output {"status":"waiting_for_approval","approver":"Anna's phone","action":"unlock the front door"}`,
    'Anna taps Approve on "unlock the front door"',
    '[house]   home/front-door/set ← {"state":"UNLOCK"}',
    'call-1_final: output {"output":',
    '[nocturn] The front door is unlocked.',
    '[person]  And open the garage.',
    '[speaker] dropped at once:',
    '[model←]  truncate',
    '[button]  short press: mute',
    '[phone]   request withdrawn',
    '[session] closed (stopped): 5 turns; tool calls 1 answered, 1 withdrawn',
    '[nocturn] You are welcome. Anna approved the front door on her phone; the garage stayed shut.',
  ]) {
    const i = text.indexOf(line, at)
    expect(i, `"${line}" after position ${at} in:\n${text}`).toBeGreaterThan(-1)
    at = i + line.length
  }
  expect(text).not.toContain('did not play as scripted')
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
