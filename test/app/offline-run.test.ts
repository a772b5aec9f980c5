import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { emptyOfLastRun } from '../../src/app/offline/run-context.js'
import { runOffline } from '../../src/app/offline-run.js'
import { silentLogger } from '../../src/core/logger.js'
import { type CpuQuota, makeCpuQuota, runInQuota } from '../helpers/cpu-quota.js'
import { captureLogger } from '../mqtt/fixture.js'

const ROOT = join(import.meta.dirname, '../..')

it('the offline run plays the household scene end to end and leaves a readable chat and a speaker WAV', async () => {
  const out = new PassThrough()
  let text = ''
  out.on('data', (c: Buffer) => {
    text += c.toString()
  })
  const workDir = mkdtempSync(join(tmpdir(), 'nocturn-offline-test-'))
  const code = await runOffline({
    out,
    logger: silentLogger,
    root: ROOT,
    workDir,
  })
  expect(code, text).toBe(0)
  const inOrder = (lines: string[]) => {
    let at = 0
    for (const line of lines) {
      const i = text.indexOf(line, at)
      expect(i, `"${line}" after position ${at} in:\n${text}`).toBeGreaterThan(-1)
      at = i + line.length
    }
  }
  // What the room, the phone, the house and the model saw, in order.
  inOrder([
    '[led]     listening',
    '[person]  Please unlock the front door for the plumber.',
    '[tool]    intent__HassTurnOff called',
    `call-1: interim {"status":"waiting_for_approval","approver":"Anna's phone","action":"Unlock Front Door — Hall"}`,
    'Anna taps Approve on "Unlock Front Door — Hall"',
    '[house]   Home Assistant runs lock.unlock on lock.front_door',
    '[house]   lock.front_door: locked → unlocked',
    // The model is told the state Home Assistant reported, not a bare "success".
    'call-1: final, scheduling INTERRUPT: {"output":{"done":true,"confirmed":true,"states":{"lock.front_door":"unlocked"},"result":"Front Door is unlocked."}}',
    '[nocturn] The front door is unlocked.',
    '[person]  And open the garage.',
    `[phone]   Anna's phone shows: "Open Garage Door — Garage"`,
    '[phone]   request withdrawn',
    // The light at once: no phone asked between the request and Home Assistant switching it.
    '[person]  And the kitchen light on, please.',
    '[tool]    intent__HassTurnOn called',
    '[house]   Home Assistant runs homeassistant.turn_on on light.kitchen',
    '[house]   light.kitchen: off → on',
    'call-3: final',
    '[speaker] dropped at once:',
    '[button]  short press: mute',
    '[model←]  audioStreamEnd',
    '[session] closed (stopped): 5 turns; tool calls 2 answered, 1 withdrawn',
    '— the spoken session, read back as a chat —',
    '[typed]   Thanks! Who let the plumber in?',
    '[nocturn] You are welcome. Anna approved the front door on her phone; the garage stayed shut.',
    'Read it again: nocturn transcripts show',
  ])
  expect(text).not.toContain('did not play as scripted')
  // In speech mode a session opens on speech, unannounced: no earcon.
  expect(text).not.toContain('[speaker] earcon')
  // The phone saw the unlock before it was answered, and the answer interrupted (nobody had moved on).
  expect(text.indexOf('[phone]   request approved')).toBeLessThan(text.indexOf('[house]'))
  expect(text).toContain('call-1: final, scheduling INTERRUPT')
  // The withdrawn garage call: no answer went to the model, and the garage never moved.
  expect(text).not.toMatch(/call-2: final/)
  expect(text).not.toContain('cover.garage_door')
  // Anna's phone was asked twice, the door and the garage; never about the light.
  expect(text.split("[phone]   Anna's phone shows:").length - 1).toBe(2)

  // The speaker WAV holds what was really played, and the chat is in the store as printed.
  const wav = statSync(join(workDir, 'speaker.wav')).size
  expect(wav).toBeGreaterThan(44 + 48_000) // more than a second of 24 kHz speech
  expect(existsSync(join(workDir, 'nocturn.db'))).toBe(true)
  const store = new SqliteStore(join(workDir, 'nocturn.db'))
  const [conv] = store.listConversations()
  const chat = store
    .messages(conv!.id)
    .map((m) => (m.role === 'tool' ? `tool:${m.toolName}` : m.text))
  expect(chat).toContain('Please unlock the front door for the plumber.')
  expect(chat).toContain('Stop, thanks.')
  // The reply cut by the barge-in is gone, every sentence of it.
  expect(chat.filter((t) => t.includes('twenty past seven'))).toEqual([])
  expect(chat.at(-1)).toMatch(/^You are welcome\./)
  store.close()

  // \`npm start\` again, in the same folder: a fresh scene, not the last one's store restored from
  // its copy as if the card had lost it (which logged an error and kept the old chat).
  const logger = captureLogger()
  expect(await runOffline({ out: new PassThrough(), logger, root: ROOT, workDir })).toBe(0)
  expect(logger.entries.filter((e) => e.level === 'warn' || e.level === 'error')).toEqual([])
  const again = new SqliteStore(join(workDir, 'nocturn.db'))
  expect(again.listConversations()).toHaveLength(1)
  again.close()
}, 120_000)

it('a scene that does not play as scripted exits 1, names what differed, and claims nothing that did not happen', async () => {
  const out = new PassThrough()
  let text = ''
  out.on('data', (c: Buffer) => {
    text += c.toString()
  })
  // Sabotaged: the model hears the request but never calls the lock, switches the wrong light,
  // and no barge-in comes.
  const code = await runOffline({
    out,
    logger: silentLogger,
    root: join(import.meta.dirname, '../..'),
    workDir: mkdtempSync(join(tmpdir(), 'nocturn-offline-sabotage-')),
    scene: {
      steps: [
        { waitFor: 'realtimeInput', timeoutMs: 60_000 },
        { send: { serverContent: { inputTranscription: { text: 'Please unlock the door.' } } } },
        {
          send: {
            toolCall: {
              functionCalls: [
                { id: 'c1', name: 'intent__HassTurnOn', args: { name: 'Counter Lights' } },
              ],
            },
          },
        },
        {
          waitFor: (f) => f.key === 'toolResponse' && JSON.stringify(f.frame).includes('"id":"c1"'),
          timeoutMs: 60_000,
        },
        { speak: 'waiting' },
        { send: { serverContent: { turnComplete: true } } },
      ],
    },
  })
  expect(code, text).toBe(1)
  expect(text).toContain('The scene did not play as scripted:')
  expect(text).toContain('the front door was never told to unlock')
  expect(text).toContain('the barge-in never dropped the speaker')
  expect(text).toContain('the kitchen light was never switched on')
  expect(text).toContain(
    'Home Assistant ran [homeassistant.turn_on light.kitchen_counter], not exactly [lock.unlock lock.front_door; homeassistant.turn_on light.kitchen] in that order',
  )
  expect(text).toContain(
    'the model was not told the front door is confirmed unlocked (told nothing)',
  )
  // The typed reply is made from what happened, not from the script.
  expect(text).toContain('the front door was not unlocked')
  expect(text).not.toContain('Anna approved')
  expect(text).not.toContain('Read it again')
}, 120_000)

describe('on a machine as slow as a small board', () => {
  // 4 % of one core: where the idle timer used to win the race against connection set-up.
  const quota = makeCpuQuota('nocturn-offline-test', 4)
  const skip = typeof quota === 'string' ? quota : undefined
  if (skip) process.stdout.write(`skipped: no CPU quota: ${skip}\n`)

  it.skipIf(skip)(
    'plays the whole scene and exits 0 under a 4 % CPU quota',
    async () => {
      const q = quota as CpuQuota
      const dir = mkdtempSync(join(tmpdir(), 'nocturn-offline-slow-'))
      try {
        const r = await runInQuota(
          q,
          `${JSON.stringify(process.execPath)} --import tsx test/app/offline-run-child.ts ${JSON.stringify(dir)}`,
          { cwd: join(import.meta.dirname, '../..'), killAfterMs: 1_500_000 },
        )
        process.stdout.write(`offline run under a 4 % CPU quota: ${r.ms} ms\n`)
        expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0)
        expect(r.stdout).toContain(
          '[session] closed (stopped): 5 turns; tool calls 2 answered, 1 withdrawn',
        )
        expect(r.stdout).toContain('[house]   lock.front_door: locked → unlocked')
        expect(r.stdout).toContain('[house]   light.kitchen: off → on')
        expect(r.stdout).toContain('Anna approved the front door on her phone')
      } finally {
        q.remove()
      }
    },
    1_600_000,
  )
})

it('npm start’s scene in wake mode: a sentence without the wake phrase opens nothing, the wake phrase in one breath does, and the wake phrase over the answer drops it', async () => {
  const out = new PassThrough()
  let text = ''
  out.on('data', (c: Buffer) => {
    text += c.toString()
  })
  const workDir = mkdtempSync(join(tmpdir(), 'nocturn-offline-wake-'))
  const code = await runOffline({
    out,
    logger: silentLogger,
    root: join(import.meta.dirname, '../..'),
    workDir,
    listen: 'wake',
  })
  expect(code, text).toBe(0)
  let at = 0
  for (const line of [
    '[wake]    "hey jarvis" from ',
    '[room]    “Is the kettle on yet?',
    '[room]    “Hey Jarvis, please unlock the front door for the plumber.”',
    '[speaker] earcon (120 ms',
    '[led]     listening',
    '[person]  Hey Jarvis, please unlock the front door for the plumber.',
    '[house]   lock.front_door: locked → unlocked',
    '[house]   light.kitchen: off → on',
    '[room]    “Hey Jarvis, stop, thanks.”',
    '[speaker] dropped at once:',
    '[speaker] earcon (120 ms',
    '[button]  short press: mute',
    '[session] closed (stopped)',
    'Read it again',
  ]) {
    const i = text.indexOf(line, at)
    expect(i, `"${line}" after position ${at} in:\n${text}`).toBeGreaterThan(-1)
    at = i + line.length
  }
  // Nothing opened on the first sentence: the LED left idle only after the wake phrase.
  expect(text.indexOf('[led]     listening')).toBeGreaterThan(
    text.indexOf('[room]    “Hey Jarvis, please'),
  )
  expect(text).not.toContain('did not play as scripted')
  // An earcon for each wake: the one that opened the session, the one that dropped the answer.
  expect(text.split('[speaker] earcon').length - 1).toBe(2)
  // The long answer, complete before it had played, was cut by the wake phrase: it is not kept.
  const store = new SqliteStore(join(workDir, 'nocturn.db'))
  const [conv] = store.listConversations()
  const chat = store.messages(conv!.id).map((m) => (m.role === 'tool' ? '' : m.text))
  store.close()
  expect(chat).toContain('Hey Jarvis, stop, thanks.')
  expect(chat.filter((t) => t.includes('twenty past seven'))).toEqual([])
  expect(text).not.toContain('[nocturn] Let me check that for you.')
}, 180_000)

it('nocturn demo takes --listen wake or speech and refuses anything else with the two it takes', async () => {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/app/cli.ts', 'demo', '--listen', 'always'],
    { cwd: join(import.meta.dirname, '../..'), encoding: 'utf8' },
  )
  expect(r.status).toBe(2)
  expect(r.stderr).toContain('--listen takes "wake" (the default) or "speech"')
  // An option it does not know is named, not ignored.
  const other = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/app/cli.ts', 'demo', '--listne', 'speech'],
    { cwd: ROOT, encoding: 'utf8' },
  )
  expect(other.status).toBe(2)
  expect(other.stderr).toContain("'--listne'")
  expect(other.stderr).toContain('it takes --listen wake|speech and --phone')
})

it('a demo folder is emptied of the last run: the store with its WAL and copies, and the phone keys, nothing else', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-offline-empty-'))
  for (const f of [
    'nocturn.db',
    'nocturn.db-wal',
    'nocturn.db.backup',
    'speaker.wav',
    'vapid-key.json',
  ])
    writeFileSync(join(dir, f), 'x')
  mkdirSync(join(dir, 'phones'))
  writeFileSync(join(dir, 'phones', 'anna.json'), '{}')
  emptyOfLastRun(dir)
  expect(readdirSync(dir).sort()).toEqual(['speaker.wav', 'vapid-key.json'])
})
