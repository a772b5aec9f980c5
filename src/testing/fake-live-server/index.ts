export {
  MALFORMED_FRAMES,
  serverFrame,
} from './frames.js'
export {
  fakeSpeechPcm,
  type GenerateAnswer,
} from './rest.js'
export type { ReceivedFrame, Script, Step } from './script.js'
export { FakeConnection, FakeLiveServer, type FakeLiveServerOptions } from './server.js'
export { phrase } from './speech.js'
