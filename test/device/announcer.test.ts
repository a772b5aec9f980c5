import { afterEach, describe, expect, it } from 'vitest'
import { GeminiSpeech } from '../../src/adapters/gemini/gemini-speech.js'
import { GainOut, gainOf, scalePcm } from '../../src/audio/gain-out.js'
import { defaultPersona } from '../../src/core/persona.js'
import { Announcer, MAX_ANNOUNCEMENT_CHARS } from '../../src/device/announcer.js'
import { DeviceState } from '../../src/device/device-state.js'
import { FakeLiveServer, fakeSpeechPcm } from '../../src/testing/fake-live-server/index.js'
import { FakeSpeaker } from '../../src/testing/fake-speaker.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { chimePcm } from '../../src/tools/chime.js'
import { KEY } from '../gemini/helpers.js'
import { until } from '../helpers/wait.js'

let server: FakeLiveServer | undefined
afterEach(async () => server?.close())

async function rig(model = 'gemini-3.8-flash-lite-tts') {
  server = await FakeLiveServer.start()
  const clock = new VirtualClock()
  const logs = new MemoryLogger()
  const device = new DeviceState({ volume: 20 })
  const speaker = new FakeSpeaker(clock, { keepAudio: true })
  const gain = new GainOut(speaker, () => device.volume)
  const announcer = new Announcer({
    speech: new GeminiSpeech({ apiKey: KEY, model, baseUrl: server.baseUrl, logger: logs }),
    persona: { ...defaultPersona, voice: 'Kore', language: 'en-GB' },
    sink: gain.alerts,
    speaker: gain,
    chime: () => chimePcm(speaker.sampleRateHz, 1),
    device,
    clock,
    logger: logs,
  })
  device.onStop(() => speaker.drop())
  return { server, clock, logs, device, speaker, announcer }
}

describe('announcements: chimed, then said in the provider speech, never into a conversation', () => {
  it('waits for the session to end, then chimes and speaks at the volume (with the alert floor), through the real SDK', async () => {
    const r = await rig()
    r.device.setActivity('listening') // a spoken session is open
    expect(r.announcer.announce('The washing is done.')).toBe(true)
    await new Promise((res) => setTimeout(res, 300))
    expect(r.speaker.writtenBytes).toBe(0) // nothing cut into the conversation
    expect(r.server.rest.filter((q) => q.path.includes(':generateContent'))).toHaveLength(0)
    r.device.setActivity('speaking')
    r.device.setActivity('idle') // the session ended
    await until(() => r.speaker.writtenBytes > 0, 'the announcement')
    // One text-to-speech call, in the persona's voice: not a session that could answer back.
    const calls = r.server.rest.filter((q) => q.path.includes(':generateContent'))
    expect(calls).toHaveLength(1)
    expect(calls[0]?.path).toBe('/v1beta/models/gemini-3.8-flash-lite-tts:generateContent')
    expect(calls[0]?.body).toMatchObject({
      contents: [{ role: 'user', parts: [{ text: 'The washing is done.' }] }],
      generationConfig: {
        responseModalities: ['AUDIO'],
        speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } },
      },
    })
    await r.clock.advance(60_000)
    // The chime then the speech, scaled by the gain: at 20 % the alert floor applies.
    const floor = gainOf(35)
    const want = Buffer.concat([
      scalePcm(chimePcm(24_000, 1), floor),
      scalePcm(fakeSpeechPcm('The washing is done.'), floor),
    ])
    expect(Buffer.from(r.speaker.audio()).equals(want)).toBe(true)
    expect(r.speaker.endsOfReply).toBe(1)
    // The text is not in the log.
    expect(JSON.stringify(r.logs.records)).not.toContain('washing')
  })

  it('too long or too many: refused and logged, nothing said; stop ends it and clears the queue', async () => {
    const r = await rig()
    r.device.setActivity('listening')
    expect(r.announcer.announce('x'.repeat(MAX_ANNOUNCEMENT_CHARS + 1))).toBe(false)
    for (let i = 0; i < 5; i++) expect(r.announcer.announce(`message ${i}`)).toBe(true)
    expect(r.announcer.announce('one too many')).toBe(false)
    expect(
      r.logs.records.filter((l) => l.fields.event === 'announcement_refused').map((l) => l.level),
    ).toEqual(['warn', 'warn'])
    r.device.stop('home_assistant')
    r.device.setActivity('idle')
    await new Promise((res) => setTimeout(res, 300))
    expect(r.speaker.writtenBytes).toBe(0)
  })

  it('a failing speech call is logged with an event and not said', async () => {
    const r = await rig('no-such-model')
    r.announcer.announce('Dinner is ready.')
    await until(
      () => r.logs.records.some((l) => l.fields.event === 'announcement_failed'),
      'the failure',
    )
    expect(r.speaker.writtenBytes).toBe(0)
  })

  it('one that waited past its expiry is dropped', async () => {
    const r = await rig()
    r.device.setActivity('listening')
    r.announcer.announce('The post came.')
    await r.clock.advance(11 * 60_000)
    r.device.setActivity('idle')
    await new Promise((res) => setTimeout(res, 300))
    expect(r.speaker.writtenBytes).toBe(0)
    expect(r.logs.records.some((l) => l.fields.event === 'announcement_expired')).toBe(true)
  })
})
