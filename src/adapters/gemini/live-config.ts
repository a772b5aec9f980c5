import type { Behavior, FunctionDeclaration, LiveConnectConfig, Modality } from '@google/genai'
import type { LiveSetup } from '../../ports/live-llm.js'
import type { ModelCapabilities } from './capabilities.js'
import { toFunctionDeclaration } from './schema.js'
import { sdkEnum } from './sdk-enum.js'

const NON_BLOCKING = sdkEnum<Behavior>('NON_BLOCKING')
const BLOCKING = sdkEnum<Behavior>('BLOCKING')
const AUDIO = sdkEnum<Modality>('AUDIO')

/**
 * What `behavior` each declaration carries: `NON_BLOCKING` only where the model supports it and the
 * driver asked; an explicit `BLOCKING` where the model's default is non-blocking (3.8) but the
 * driver wants blocking; nothing where the model knows only blocking calls (3.1), since what it
 * does with the field is undocumented.
 */
export function behaviorFor(setup: LiveSetup, caps: ModelCapabilities): Behavior | undefined {
  if (!caps.blockingAllowed) return NON_BLOCKING
  if (caps.asyncToolCalls && setup.nonBlockingTools) return NON_BLOCKING
  if (caps.nonBlockingByDefault) return BLOCKING
  return undefined
}

/** The SDK's `LiveConnectConfig` for one connection; the SDK flattens it into the `setup` frame. */
export function liveConnectConfig(setup: LiveSetup, caps: ModelCapabilities): LiveConnectConfig {
  const behavior = behaviorFor(setup, caps)
  const declarations: FunctionDeclaration[] = setup.tools.map((t) => {
    const d = toFunctionDeclaration(t)
    return behavior ? { ...d, behavior } : d
  })
  const config: LiveConnectConfig = {
    responseModalities: [AUDIO],
    speechConfig: {
      voiceConfig: { prebuiltVoiceConfig: { voiceName: setup.persona.voice } },
      languageCode: setup.persona.language,
    },
    systemInstruction: setup.persona.instruction,
    // Audio-only sessions end after 15 minutes without compression.
    contextWindowCompression: { slidingWindow: {} },
  }
  if (declarations.length > 0) config.tools = [{ functionDeclarations: declarations }]
  if (caps.transcription) {
    // The config keys are *Audio*Transcription; the server's fields are inputTranscription etc.
    config.inputAudioTranscription = {}
    config.outputAudioTranscription = {}
  }
  if (caps.resumption) {
    // `{}` starts a resumable session; `{handle}` resumes one.
    config.sessionResumption = setup.resumeHandle ? { handle: setup.resumeHandle } : {}
  }
  return config
}
