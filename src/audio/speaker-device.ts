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
  /**
   * True while the device cannot take anything until someone else acts (its process stopped by
   * SIGSTOP or a debugger). Unlike a lack of progress this needs no waiting: a stopped player is
   * replaced at the next look, even when it owes no audio yet.
   */
  frozen?(): boolean
  close(): Promise<void>
}
