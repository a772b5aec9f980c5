/**
 * SpeakerDevice: what the paced speaker feeds — an `aplay` child, a PortAudio stream, a WAV file.
 * It only ever holds the small lead the paced speaker hands it, so `silence()` has little to lose.
 */
export interface SpeakerDevice {
  /** Hand PCM to the device now. Never blocks. */
  write(pcm: Uint8Array): void
  /** Throw away whatever the device still holds, and be ready to play the next write at once. */
  silence(): void
  close(): Promise<void>
}
