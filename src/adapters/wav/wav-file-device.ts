import { closeSync, openSync, writeSync } from 'node:fs'
import type { SpeakerDevice } from '../../audio/speaker-device.js'
import { wavHeader } from '../../audio/wav.js'

/**
 * A speaker that records into a WAV file. The header is written with an "unknown length" size and
 * patched on close, so a crash still leaves a file players can open. A file cannot unplay what it
 * was given, so `silence()` only marks the cut for whoever reads the file.
 */
export class WavFileDevice implements SpeakerDevice {
  readonly #fd: number
  readonly #sampleRateHz: number
  #bytes = 0
  #closed = false
  /** Byte offsets (into the audio data) where a drop cut the playback. */
  readonly cuts: number[] = []

  constructor(path: string, sampleRateHz: number) {
    this.#sampleRateHz = sampleRateHz
    this.#fd = openSync(path, 'w')
    writeSync(this.#fd, wavHeader(sampleRateHz, 0xffffffff))
  }

  write(pcm: Uint8Array): void {
    if (this.#closed) return
    // Synchronous and small (one lead's worth a tick): simpler than ordering async writes.
    writeSync(this.#fd, pcm)
    this.#bytes += pcm.byteLength
  }

  silence(): void {
    this.cuts.push(this.#bytes)
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    writeSync(this.#fd, wavHeader(this.#sampleRateHz, this.#bytes), 0, 44, 0)
    closeSync(this.#fd)
  }
}
