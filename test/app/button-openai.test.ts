import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseWav } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { FakeRealtimeServer } from '../../src/testing/fake-realtime-server/index.js'
import { hermeticAlsa } from '../helpers/alsa.js'
import { fakeGpiod } from '../helpers/fake-gpiod.js'
import { startNocturnRun, writeRunConfig } from '../helpers/nocturn-process.js'
import { RoomFeeds } from '../helpers/room-feed.js'
import { missingCommands } from '../helpers/system.js'
import { OPENAI_KEY } from '../openai/helpers.js'

const ROOT = join(import.meta.dirname, '../..')
const skip = missingCommands('arecord', 'aplay')

/** Two seconds of a person talking. */
function command(): Uint8Array {
  const wav = parseWav(readFileSync(join(ROOT, 'fixtures/vad/speech-en-gb-f.wav')), 16_000)
  return wav.pcm.subarray(32_000, 96_000)
}

/**
 * `button` mode on OpenAI Realtime, as a household runs it: a real `nocturn run`, the real
 * `arecord`/`aplay` on file-backed ALSA (the microphone a FIFO fed at the pace of real time), the
 * gpiod panel on libgpiod 2 command lines (stand-ins printing the edges of one short press), the
 * real `openai` package against the fake Realtime service. Nothing opens until the button is
 * pressed; the press opens a session whose audio reaches the service (resampled to 24 kHz), the model's
 * answer is played, and the quiet room ends the session. The second case puts a refusing Gemini
 * first: the same press is answered on OpenAI, and the log says why.
 */
describe.skipIf(skip)('button mode on OpenAI Realtime, as a process', () => {
  const closers: (() => Promise<unknown> | unknown)[] = []
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await Promise.resolve(c()).catch(() => {})
  })

  async function speaker(provider: (openaiUrl: string) => Promise<unknown>) {
    const work = mkdtempSync(join(tmpdir(), 'nocturn-button-openai-'))
    const alsa = hermeticAlsa('fifo', { stall: false })
    const gpiod = fakeGpiod(2)
    closers.push(() => gpiod.cleanup())
    // Pressed when the test releases "press", let go 0.2 s later: in button mode a short press
    // talks (a long one mutes).
    gpiod.scriptMonitor([
      [
        { ms: 0, whenFile: 'press', edge: 'falling' },
        { ms: 200, edge: 'rising' },
      ],
    ])
    const openai = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY })
    closers.push(() => openai.close())
    const config = writeRunConfig(
      work,
      { baseUrl: '', inputWav: '/nonexistent.wav', brokerUrl: '' },
      {
        provider: await provider(openai.baseUrl),
        audio: { backend: 'alsa', capturePcm: alsa.capture, playbackPcm: alsa.playback },
        mqtt: undefined,
        listen: { mode: 'button' },
        panel: { backend: 'gpiod', button: 'GPIO17' },
        session: { idleTimeoutSeconds: 3 },
        phoneApp: { enabled: false },
      },
    )
    const nocturn = startNocturnRun(config, {
      apiKey: 'a-revoked-gemini-key',
      env: {
        ...gpiod.env,
        ALSA_CONFIG_PATH: alsa.env.ALSA_CONFIG_PATH,
        OPENAI_API_KEY: OPENAI_KEY,
      },
    })
    closers.push(() => nocturn.stop('SIGKILL'))
    const feeds = new RoomFeeds([alsa.infile])
    feeds.start()
    closers.push(() => feeds.stop())
    await nocturn.waitForLine('the running line', (l) => l.event === 'nocturn_running', 90_000)
    await nocturn.waitFor('the recorder fed', () => feeds.heard(0, 1000), 30_000)
    return { alsa, gpiod, openai, nocturn, feeds }
  }

  /** Presses and talks; the model hears it out and answers; the room goes quiet. */
  async function holdTalkAndHear(s: Awaited<ReturnType<typeof speaker>>) {
    // Speech alone opens nothing in button mode.
    s.feeds.play(command(), [{ i: 0 }])
    await s.nocturn.waitFor('the speech played', () => s.feeds.idle, 30_000)
    expect(s.openai.connections).toHaveLength(0)

    s.gpiod.release('press')
    s.feeds.play(command(), [{ i: 0 }])
    await s.nocturn.waitForLine('the press to talk', (l) => l.msg === 'press to talk', 15_000)
    const conn = await s.openai.waitForConnection(0, 30_000)
    // What was said reaches the service, at 24 kHz (48 bytes a ms): a second of it at least.
    await s.openai.until(() => conn.heardMs >= 1000, 30_000)
    conn.user('What time is it?')
    conn.reply({ text: 'It is noon.', audioMs: 2000 })
    // The answer reaches the speaker: `aplay` writes it out as it plays.
    await s.nocturn.waitFor(
      'the answer played',
      () => Buffer.concat(s.alsa.played()).some((b) => b !== 0),
      30_000,
    )
    const closed = await s.nocturn.waitForEvent('session_closed', 60_000)
    expect(closed.reason).not.toBe('unconfirmed')
    expect(closed.turns).toBeGreaterThan(0)
    expect(conn.errors).toEqual([])
    const opened = s.nocturn.lines.find((l) => l.msg === 'talk pressed: opening a session')
    expect(opened?.cause).toBe('button')
    return closed
  }

  it('a press opens a session on OpenAI; the command reaches it and the answer plays', async () => {
    const s = await speaker(async (url) => ({ kind: 'openai', baseUrl: url }))
    await holdTalkAndHear(s)
    expect(s.openai.connections).toHaveLength(1)
  }, 240_000)

  it('with a refusing Gemini first, the press is answered on OpenAI and the log says why', async () => {
    const gemini = await FakeLiveServer.start({ refuse: 'key', logger: silentLogger })
    closers.push(() => gemini.close())
    const s = await speaker(async (url) => [
      {
        kind: 'gemini',
        model: 'gemini-2.5-flash-native-audio-preview-12-2025',
        baseUrl: gemini.baseUrl,
      },
      { kind: 'openai', baseUrl: url },
    ])
    await holdTalkAndHear(s)
    expect(gemini.connections).toHaveLength(1)
    expect(s.nocturn.lines.find((l) => l.event === 'provider_failed')).toMatchObject({
      provider: 'gemini',
      reason: 'key_refused',
    })
    expect(s.nocturn.lines.find((l) => l.event === 'provider_chosen')).toMatchObject({
      provider: 'openai',
      failedBefore: 1,
    })
    // The key is never in the log, refused or not.
    expect(s.nocturn.lines.some((l) => JSON.stringify(l).includes(OPENAI_KEY))).toBe(false)
    expect(s.nocturn.lines.some((l) => JSON.stringify(l).includes('a-revoked-gemini-key'))).toBe(
      false,
    )
  }, 240_000)
})
