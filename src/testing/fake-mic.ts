import type { AudioIn, AudioInSink } from '../ports/audio.js'

/**
 * A 16 kHz microphone that a test or benchmark speaks into: it holds the sink from `start` to
 * `stop`, and the caller hands frames to `sink` itself, when and as it likes.
 */
export class FakeMic implements AudioIn {
  readonly sampleRateHz = 16_000
  sink?: AudioInSink | undefined
  async start(sink: AudioInSink): Promise<void> {
    this.sink = sink
  }
  async stop(): Promise<void> {
    this.sink = undefined
  }
}
