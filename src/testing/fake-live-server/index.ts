export {
  MALFORMED_FRAMES,
  type ServerFrame,
  serverFrame,
  unknownModelReason,
} from './frames.js'
export {
  DEFAULT_MODELS,
  type FakeModel,
  fakeSpeechPcm,
  type GenerateAnswer,
  type GenerateStep,
} from './rest.js'
export type { ReceivedFrame, Script, Step } from './script.js'
export { FakeConnection, FakeLiveServer, type FakeLiveServerOptions } from './server.js'
export { type Phrase, phrase, phraseNames, SPEECH_RATE_HZ } from './speech.js'
