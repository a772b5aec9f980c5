import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseWav } from '../../src/audio/wav.js'
import { atRate } from '../../src/device/pcm-rate.js'
import { WHY_SENTENCES } from '../../src/device/why-sentences.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { FakeRealtimeServer } from '../../src/testing/fake-realtime-server/index.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { earconPcm } from '../../src/tools/chime.js'
import { keyedAppliance } from '../helpers/keyed-appliance.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'

const skip = missingCommands('espeak-ng')
const closers: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c()
})

/** The appliance on WAV audio, the button on the terminal's keys (`m` talks in button mode). */
async function speaker(server: FakeLiveServer, log: MemoryLogger, extra = {}) {
  const work = mkdtempSync(join(tmpdir(), 'nocturn-why-app-'))
  const { appliance, keys } = await keyedAppliance(work, server.baseUrl, log, {
    listen: { mode: 'button' },
    ...extra,
  })
  closers.push(() => appliance.close())
  return {
    appliance,
    press: () => keys.write('m'),
    /** What the speaker has played so far (the WAV file as it is being written). */
    played: () => Buffer.from(parseWav(readFileSync(join(work, 'speaker.wav')), 24_000).pcm),
  }
}

function espeakAt24k(text: string): Buffer {
  const wav = execFileSync('espeak-ng', ['-v', 'en-gb', '--stdout', text])
  return Buffer.from(atRate(wav.subarray(44), 22_050, 24_000))
}

describe.skipIf(skip !== undefined)('the room hears why, in the composed appliance', () => {
  it('a session whose provider is lost: after the earcon, the sentence (espeak-ng before any sentence was made) from the speaker; the LED and the status show it until a provider is reached', async () => {
    const server = await FakeLiveServer.start({ logger: new MemoryLogger() })
    closers.push(() => server.close())
    const log = new MemoryLogger()
    const s = await speaker(server, log)
    const device = s.appliance.device
    s.press()
    await until(() => device.snapshot.activity === 'listening', 'a session opening', 20_000)
    // The LED listens from the press, before the session's provider answers; the fault below must
    // come after that answer, or the answer clears it (as it should) and the LED shows listening.
    await until(() => log.withEvent('provider_chosen').length === 1, 'the provider reached', 20_000)
    // What the failover tells when a reconnection finds no provider (driven here directly).
    s.appliance.providers.unreachable([
      { provider: 'gemini', reason: 'offline', detail: 'fetch failed' },
    ])
    await until(() => log.withEvent('why_said').length === 1, 'the sentence said')
    expect(s.appliance.panel.led).toBe('error')
    expect(device.snapshot.reason).toBe('no voice service can be reached (gemini offline)')
    s.appliance.providers.reached('gemini')
    expect(s.appliance.panel.led).not.toBe('error')
    const sentence = espeakAt24k(WHY_SENTENCES.offline)
    await until(() => s.played().indexOf(sentence) >= 0, 'the sentence played', 20_000)
    const played = s.played()
    expect(played.indexOf(sentence)).toBeGreaterThan(played.indexOf(Buffer.from(earconPcm(24_000))))
    expect(played.indexOf(Buffer.from(earconPcm(24_000)))).toBeGreaterThanOrEqual(0)
  }, 60_000)

  it('end to end: Gemini refuses the key and OpenAI its quota; the press plays the earcon, then the sentence for why, and the status names both', async () => {
    const gemini = await FakeLiveServer.start({
      apiKey: 'not-the-key-the-speaker-has',
      logger: new MemoryLogger(),
    })
    closers.push(() => gemini.close())
    const openai = await FakeRealtimeServer.start({ refuse: 429 })
    closers.push(() => openai.close())
    const work = mkdtempSync(join(tmpdir(), 'nocturn-why-both-'))
    writeFileSync(join(work, 'openai-key'), 'an-openai-key\n', { mode: 0o600 })
    const log = new MemoryLogger()
    const s = await speaker(gemini, log, {
      provider: [
        {
          kind: 'gemini',
          model: 'gemini-2.5-flash-native-audio-preview-12-2025',
          baseUrl: gemini.baseUrl,
        },
        { kind: 'openai', baseUrl: openai.baseUrl, apiKeyFile: join(work, 'openai-key') },
      ],
    })
    s.press()
    await until(() => log.withEvent('why_said').length === 1, 'the sentence said', 20_000)
    // Both were tried, in order; the first failure a household can act on is what it hears.
    expect(openai.refused).toContain(429)
    const said = log.withEvent('why_said')[0]?.fields
    expect(said).toMatchObject({ source: 'local', reason: 'key_refused' })
    expect(s.appliance.device.snapshot.providers).toEqual([
      expect.objectContaining({ provider: 'gemini', ok: false, reason: 'key_refused' }),
      expect.objectContaining({ provider: 'openai', ok: false, reason: 'quota' }),
    ])
    expect(s.appliance.panel.led).toBe('error')
    const sentence = espeakAt24k(WHY_SENTENCES.key_refused)
    await until(() => s.played().indexOf(sentence) >= 0, 'the sentence played', 20_000)
    const played = s.played()
    const earcon = played.indexOf(Buffer.from(earconPcm(24_000)))
    expect(earcon).toBeGreaterThanOrEqual(0)
    expect(played.indexOf(sentence)).toBeGreaterThan(earcon)
  }, 60_000)
})
