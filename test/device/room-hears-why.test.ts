import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { EspeakSpeech } from '../../src/adapters/espeak-ng/espeak-speech.js'
import { GeminiSpeech } from '../../src/adapters/gemini/gemini-speech.js'
import { createWavSpeaker } from '../../src/adapters/wav/wav-speaker.js'
import { Closers } from '../../src/app/compose/composition.js'
import {
  composeProviderListener,
  WHY_SENTENCES_DIR,
} from '../../src/app/compose/provider-health.js'
import { GainOut } from '../../src/audio/gain-out.js'
import { parseWav } from '../../src/audio/wav.js'
import { defaultPersona } from '../../src/core/persona.js'
import { DeviceState } from '../../src/device/device-state.js'
import { atRate } from '../../src/device/pcm-rate.js'
import { VOICE_SERVICE_FAULT } from '../../src/device/provider-health.js'
import { WHY_REASONS, WHY_SENTENCES } from '../../src/device/why-sentences.js'
import type { ProviderFailure } from '../../src/ports/provider-listener.js'
import type { Speech } from '../../src/ports/speech.js'
import { FakeLiveServer, fakeSpeechPcm } from '../../src/testing/fake-live-server/index.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { troublePcm } from '../../src/tools/chime.js'
import { KEY } from '../gemini/helpers.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { wavApplianceConfig } from '../helpers/wav-appliance.js'

const RATE = 24_000
const TTS_MODEL = 'gemini-3.8-flash-lite-tts'
const noEspeak = missingCommands('espeak-ng')

const OFFLINE: ProviderFailure = { provider: 'gemini', reason: 'offline', detail: 'fetch failed' }
const KEY_REFUSED: ProviderFailure = {
  provider: 'gemini',
  reason: 'key_refused',
  detail: 'API key not valid. Please pass a valid API key.',
}

const closing: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c()
})

/**
 * The listener as the appliance composes it (compose/provider-health.ts) over real parts: the WAV
 * file speaker behind the paced buffer and the gain stage, the sentences kept as WAV files beside
 * the store, espeak-ng by its command line, a provider's speech through the real SDK against the
 * fake service. `dir` is the data folder (a restart reuses it).
 */
function rig(o: { dir?: string; local?: Speech; speech?: Speech } = {}) {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'nocturn-why-'))
  const out = join(dir, `speaker-${Date.now()}-${Math.random()}.wav`)
  const clock = new VirtualClock()
  const logs = new MemoryLogger()
  const device = new DeviceState()
  const { speaker } = createWavSpeaker({ path: out, clock })
  const gain = new GainOut(speaker, () => device.volume)
  // The driver with no session drops the speaker on the stop command (voice-driver.ts).
  device.onStop(() => speaker.drop())
  const closers = new Closers(logs)
  const config = wavApplianceConfig(dir, 'http://127.0.0.1:9', join(dir, 'nocturn.db')).config
  const listener = composeProviderListener(
    { config, clock, log: logs, closers },
    {
      device,
      speaker: gain,
      persona: defaultPersona,
      speechFor: (provider) => (provider === 'gemini' ? o.speech : undefined),
      ...(o.local && { local: o.local }),
    },
  )
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await closers.close()
    await speaker.close()
  }
  closing.push(close)
  return {
    dir,
    clock,
    logs,
    device,
    speaker,
    listener,
    said: () => logs.withEvent('why_said'),
    /** Everything the speaker played, once it has played out (the file closed). */
    async played(): Promise<Buffer> {
      await clock.advance(20_000)
      await close()
      return Buffer.from(parseWav(readFileSync(out), RATE).pcm)
    },
  }
}

/** espeak-ng's own WAV for `text`, read independently of the adapter, at the speaker's rate. */
function espeakAt24k(text: string): Buffer {
  const wav = execFileSync('espeak-ng', ['-v', 'en-gb', '--stdout', text])
  // A pipe's header has placeholder sizes; espeak-ng's is 44 bytes at 22.05 kHz mono.
  expect(wav.readUInt32LE(24)).toBe(22_050)
  return Buffer.from(atRate(wav.subarray(44), 22_050, RATE))
}

function contains(played: Buffer, pcm: Uint8Array): boolean {
  return pcm.byteLength > 0 && played.indexOf(Buffer.from(pcm)) >= 0
}

describe('the room hears why no provider can be reached', () => {
  it.skipIf(noEspeak !== undefined)(
    'before any success: espeak-ng says it, once per session, and again in the next session',
    async () => {
      const r = rig()
      r.device.setActivity('listening') // a wake opened a session; its connection is opening
      r.listener.unreachable([OFFLINE])
      await until(() => r.said().length === 1, 'the sentence said')
      expect(r.said()[0]?.fields).toMatchObject({ reason: 'offline', source: 'local' })
      // The same session fails to reach a provider again (a reconnect): said once is enough.
      r.listener.unreachable([OFFLINE])
      await new Promise((res) => setTimeout(res, 300))
      expect(r.said()).toHaveLength(1)
      // The session ended in error; the next wake's session is told again, and the room hears it.
      r.device.setActivity('error')
      r.device.setActivity('listening')
      r.listener.unreachable([{ ...KEY_REFUSED }, { ...OFFLINE, provider: 'openai' }])
      await until(() => r.said().length === 2, 'said in the next session')
      expect(r.said()[1]?.fields).toMatchObject({ reason: 'key_refused', source: 'local' })
      const played = await r.played()
      expect(contains(played, espeakAt24k(WHY_SENTENCES.offline))).toBe(true)
      expect(contains(played, espeakAt24k(WHY_SENTENCES.key_refused))).toBe(true)
      // Nothing but the two sentences: no tone.
      expect(contains(played, troublePcm(RATE))).toBe(false)
    },
    30_000,
  )

  it('espeak-ng missing: a tone pattern, never silence', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'nocturn-no-espeak-'))
    const r = rig({ local: new EspeakSpeech({ env: { PATH: empty } }) })
    r.device.setActivity('listening')
    r.listener.unreachable([OFFLINE])
    await until(() => r.said().length === 1, 'the tone played')
    expect(r.said()[0]?.fields).toMatchObject({ reason: 'offline', source: 'tone' })
    const failed = r.logs.withEvent('why_local_voice_failed')
    expect(String(failed[0]?.fields.err)).toContain('espeak-ng is not installed')
    const played = await r.played()
    expect(contains(played, troublePcm(RATE))).toBe(true)
  })

  it("after one success the provider's own speech makes every sentence; they are kept on the device and said, also after a restart with no network", async () => {
    const server = await FakeLiveServer.start()
    closing.push(() => server.close())
    const speech = new GeminiSpeech({
      apiKey: KEY,
      model: TTS_MODEL,
      baseUrl: server.baseUrl,
      logger: new MemoryLogger(),
    })
    const empty = mkdtempSync(join(tmpdir(), 'nocturn-no-espeak-'))
    const local = new EspeakSpeech({ env: { PATH: empty } })
    const r = rig({ speech, local })
    // Reached by a session: nothing is made while it runs (the conversation has the network).
    r.device.setActivity('listening')
    r.listener.reached('gemini')
    await new Promise((res) => setTimeout(res, 200))
    expect(server.rest).toHaveLength(0)
    r.device.setActivity('idle') // the session ended
    const kept = join(r.dir, WHY_SENTENCES_DIR)
    await until(
      () => readdirSafe(kept).filter((f) => f.endsWith('.wav')).length === WHY_REASONS.length,
      'every sentence made and kept',
    )
    // One text-to-speech call per sentence, in the persona's voice and the sentence's words.
    const calls = server.rest.filter((q) => q.path.endsWith(`${TTS_MODEL}:generateContent`))
    expect(calls.map((c) => textOf(c.body))).toEqual(WHY_REASONS.map((x) => WHY_SENTENCES[x]))
    expect(JSON.stringify(calls[0]?.body)).toContain(defaultPersona.voice)
    // Reached again: nothing is made twice.
    r.listener.reached('gemini')
    await new Promise((res) => setTimeout(res, 200))
    expect(server.rest.filter((q) => q.path.includes(':generateContent'))).toHaveLength(
      WHY_REASONS.length,
    )
    r.device.setActivity('listening')
    r.listener.unreachable([KEY_REFUSED])
    await until(() => r.said().length === 1, 'the kept sentence said')
    expect(r.said()[0]?.fields).toMatchObject({ source: 'provider', provider: 'gemini' })
    expect(contains(await r.played(), fakeSpeechPcm(WHY_SENTENCES.key_refused))).toBe(true)

    // A restart with the service gone: the sentence kept on the device is said, not espeak-ng's.
    await server.close()
    const again = rig({ dir: r.dir, speech, local })
    again.device.setActivity('listening')
    again.listener.unreachable([OFFLINE])
    await until(() => again.said().length === 1, 'said after the restart')
    expect(again.said()[0]?.fields).toMatchObject({ source: 'provider', reason: 'offline' })
    expect(contains(await again.played(), fakeSpeechPcm(WHY_SENTENCES.offline))).toBe(true)
  }, 30_000)

  it('never over a ringing timer, never outside a session; the stop button drops it as it drops a reply', async () => {
    const r = rig()
    // A retry nobody asked for (no session opening): the room is not talked to.
    r.listener.unreachable([OFFLINE])
    r.device.ringing('tea', true)
    r.device.setActivity('listening')
    r.listener.unreachable([OFFLINE])
    await new Promise((res) => setTimeout(res, 300))
    expect(r.said()).toHaveLength(0)
    expect(r.speaker.queuedMs()).toBe(0)
    r.device.ringing('tea', false)
    r.device.setActivity('error')
    r.device.setActivity('listening')
    r.listener.unreachable([OFFLINE])
    await until(() => r.said().length === 1, 'said once the ring stopped')
    expect(r.speaker.queuedMs()).toBeGreaterThan(500)
    await r.clock.advance(200)
    r.device.stop('button')
    expect(r.speaker.queuedMs()).toBe(0)
    expect(r.speaker.playedMs()).toBe(0) // dropped: its played time starts again
  })

  it('the LED shows its error pattern and the status why while none can be reached; a provider reached clears it', () => {
    const r = rig()
    r.listener.failed(KEY_REFUSED)
    // One provider failed, the next is being tried: no error yet.
    expect(r.device.snapshot.led).toBe('idle')
    expect(r.device.snapshot.providers).toEqual([
      { provider: 'gemini', ok: false, reason: 'key_refused', detail: KEY_REFUSED.detail },
    ])
    r.listener.unreachable([KEY_REFUSED, { ...OFFLINE, provider: 'openai' }])
    expect(r.device.snapshot.led).toBe('error')
    expect(r.device.snapshot.reason).toBe(
      'no voice service can be reached (gemini key refused, openai offline)',
    )
    r.listener.reached('openai')
    expect(r.device.snapshot.led).toBe('idle')
    expect(r.device.snapshot.reason).toBeUndefined()
    expect(r.device.snapshot.providers.map((p) => [p.provider, p.ok])).toEqual([
      ['gemini', false],
      ['openai', true],
    ])
    // A vendor's message quoting a credential never reaches the retained status.
    r.listener.failed({
      provider: 'gemini',
      reason: 'refused',
      detail:
        'closed: wss://h/ws?key=AIzaSECRET1234&alt=1 (Authorization: Bearer sk-proj-SECRET5678)',
    })
    const shown = JSON.stringify(r.device.snapshot.providers)
    expect(shown).not.toContain('SECRET')
    expect(shown).toContain('key=[redacted]')
    // Another fault is not cleared by it.
    r.device.fault('microphone', 'no frames')
    r.listener.reached('gemini')
    expect(r.device.snapshot.reason).toBe('no frames')
    expect(VOICE_SERVICE_FAULT).toBe('voice service')
  })
})

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    mkdirSync(dir, { recursive: true })
    return []
  }
}

function textOf(body: Record<string, unknown> | undefined): string | undefined {
  const contents = body?.contents as { parts?: { text?: string }[] }[] | undefined
  return contents?.[0]?.parts?.[0]?.text
}
