import type { Publisher, PublishOptions } from '../ports/publisher.js'

/** A Publisher that keeps what it was given (or fails on demand), for tests and the offline run. */
export class RecordingPublisher implements Publisher {
  readonly published: Array<{ topic: string; payload: string; opts: PublishOptions }> = []
  failWith: Error | undefined

  async publish(topic: string, payload: string | Uint8Array, opts: PublishOptions): Promise<void> {
    if (this.failWith) throw this.failWith
    const text = typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8')
    this.published.push({ topic, payload: text, opts })
  }
}
