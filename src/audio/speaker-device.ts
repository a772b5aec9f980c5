/**
 * SpeakerDevice: what the paced speaker feeds — an `aplay` child, a PortAudio stream, a WAV file.
 * It only ever holds the lead the paced speaker hands it, and `silence()` throws that away.
 */
export interface SpeakerDevice {
  /** Hand PCM to the device now. Never blocks. */
  write(pcm: Uint8Array): void
  /** Throw away whatever the device still holds, and be ready to play the next write at once. */
  silence(): void
  /**
   * The paced speaker has nothing more to play for now. A device that holds back partial blocks
   * (aplay reads stdin in whole periods) pushes them out here instead of at the next reply.
   */
  endOfAudio?(): void
  /**
   * A reading that changes whenever the device takes in audio (any unit), or undefined when it
   * cannot tell right now. A reading that stays put while audio waits means the device is hung.
   */
  progress?(): number | undefined
  close(): Promise<void>
}
