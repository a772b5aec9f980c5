import { afterEach, describe, expect, it } from 'vitest'
import { defaultPersona } from '../../src/core/persona.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { geminiLive, liveSetup, recorder } from './helpers.js'

let server: FakeLiveServer
afterEach(async () => server?.close())

async function openWith(model: string, setup = liveSetup()) {
  server = await FakeLiveServer.start()
  const live = geminiLive({ model, baseUrl: server.baseUrl })
  const session = await live.open(setup, recorder())
  const [frame] = server.framesOf('setup')
  await session.close()
  return { live, setup: (frame as { setup: Record<string, unknown> }).setup }
}

const unlockParams = {
  type: 'OBJECT',
  properties: { door: { type: 'STRING', description: 'which door', enum: ['front', 'back'] } },
  required: ['door'],
}

describe('the setup frame the real SDK sends through the adapter', () => {
  it('on an async model: every tool NON_BLOCKING, transcription on both sides, a new resumable session', async () => {
    const { live, setup } = await openWith('gemini-2.5-flash-native-audio-preview-12-2025')
    expect(live.capabilities).toEqual({
      model: 'gemini-2.5-flash-native-audio-preview-12-2025',
      asyncToolCalls: true,
      transcription: true,
      // Gemini's words come before its reply or unmarked: no reply waits for them.
      lateTranscription: false,
      resumption: true,
    })
    expect(setup).toEqual({
      model: 'models/gemini-2.5-flash-native-audio-preview-12-2025',
      generationConfig: {
        responseModalities: ['AUDIO'],
        speechConfig: {
          voiceConfig: { prebuiltVoiceConfig: { voiceName: defaultPersona.voice } },
          languageCode: defaultPersona.language,
        },
      },
      systemInstruction: { parts: [{ text: defaultPersona.instruction }], role: 'user' },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'unlock_door',
              description: 'Unlock a door of the house.',
              parameters: unlockParams,
              behavior: 'NON_BLOCKING',
            },
            {
              name: 'current_time',
              description: 'The local time.',
              parameters: { type: 'OBJECT', properties: {} },
              behavior: 'NON_BLOCKING',
            },
          ],
        },
      ],
      sessionResumption: {},
      inputAudioTranscription: {},
      outputAudioTranscription: {},
      contextWindowCompression: { slidingWindow: {} },
    })
  })

  it('on gemini-3.1-flash-live (synchronous only): no behavior at all, even when asked', async () => {
    const { live, setup } = await openWith('gemini-3.1-flash-live-preview')
    expect(live.capabilities.asyncToolCalls).toBe(false)
    const decls = (setup.tools as { functionDeclarations: Record<string, unknown>[] }[])[0]
      ?.functionDeclarations
    expect(decls?.map((d) => d.behavior)).toEqual([undefined, undefined])
    expect(decls?.[0]).toEqual({
      name: 'unlock_door',
      description: 'Unlock a door of the house.',
      parameters: unlockParams,
    })
  })

  it('on gemini-3.8-live with blocking tools asked for: explicit BLOCKING (its default is non-blocking)', async () => {
    const { setup } = await openWith('gemini-3.8-live', liveSetup({ nonBlockingTools: false }))
    const decls = (setup.tools as { functionDeclarations: Record<string, unknown>[] }[])[0]
      ?.functionDeclarations
    expect(decls?.map((d) => d.behavior)).toEqual(['BLOCKING', 'BLOCKING'])
  })

  it('on gemini-3.8-live-extended-thinking: NON_BLOCKING always (BLOCKING is a hard error there)', async () => {
    const { setup } = await openWith(
      'gemini-3.8-live-extended-thinking',
      liveSetup({ nonBlockingTools: false }),
    )
    const decls = (setup.tools as { functionDeclarations: Record<string, unknown>[] }[])[0]
      ?.functionDeclarations
    expect(decls?.map((d) => d.behavior)).toEqual(['NON_BLOCKING', 'NON_BLOCKING'])
  })

  it('without tools: no tools key', async () => {
    const { setup } = await openWith('gemini-3.8-live', liveSetup({ tools: [] }))
    expect(setup.tools).toBeUndefined()
  })
})
