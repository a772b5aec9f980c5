import { dirname } from 'node:path'
import { GainOut } from '../../audio/gain-out.js'
import { errorText } from '../../core/errors.js'
import type { DeviceState } from '../../device/device-state.js'
import type { AudioOut, DropReport } from '../../ports/audio.js'
import { type Audio, openAudio } from '../audio.js'
import type { Composition } from './composition.js'

interface SoundOptions {
  /** The WAV microphone plays in real time (default) or not. */
  readonly wavPaced?: boolean | undefined
  /** The WAV microphone starts again at the end of its file. */
  readonly wavLoop?: boolean | undefined
  /** Told every drop of the speaker's buffer, with what it discarded. */
  readonly onDrop?: ((report: DropReport) => void) | undefined
}

/**
 * The microphone and the speaker on the configured backend, the microphone muted by the device's
 * state and the speaker behind the one gain stage (its volume). A failing device is a fault of the
 * device's state (`onFault`). `voiceSpeaker` is the speaker the voice driver writes to, its drops
 * told to `onDrop`; `speaker.alerts` is the path of timers, earcons and announcements (the floor).
 */
export async function openSound(
  { config: c, clock, log, closers }: Composition,
  device: DeviceState,
  onFault: (message: string) => void,
  options: SoundOptions,
): Promise<Omit<Audio, 'speaker'> & { speaker: GainOut; voiceSpeaker: AudioOut }> {
  const audio = await openAudio(
    {
      backend: c.audio.backend,
      capture: c.audio.backend === 'wav' ? (c.audio.inputWav as string) : c.audio.capturePcm,
      playback:
        c.audio.backend === 'wav'
          ? (c.audio.outputWav ?? `${dirname(c.store.path)}/speaker.wav`)
          : c.audio.playbackPcm,
      echo: c.audio.echo,
      echoTailMs: c.audio.tailMs,
      wavPaced: options.wavPaced ?? true,
      ...(options.wavLoop !== undefined && { wavLoop: options.wavLoop }),
    },
    {
      clock,
      logger: log.child({ component: 'audio' }),
      onError: (e) => {
        log.error(
          { event: 'audio_device_failed', code: e.code, err: errorText(e) },
          'audio device failed',
        )
        onFault(e.message)
      },
      mute: device,
    },
  )
  closers.add(() => audio.speaker.close())
  const speaker = new GainOut(audio.speaker, () => device.volume)
  const voiceSpeaker = options.onDrop ? observedDrops(speaker, options.onDrop) : speaker
  return {
    mic: audio.mic,
    speaker,
    voiceSpeaker,
    ...(audio.reads && { reads: audio.reads }),
  }
}

/** The speaker, telling `onDrop` about every drop after it happened. */
function observedDrops(inner: AudioOut, onDrop: (r: DropReport) => void): AudioOut {
  return {
    sampleRateHz: inner.sampleRateHz,
    write: (pcm) => inner.write(pcm),
    endOfReply: () => inner.endOfReply(),
    drop: () => {
      const r = inner.drop()
      onDrop(r)
      return r
    },
    playedMs: () => inner.playedMs(),
    queuedMs: () => inner.queuedMs(),
    close: () => inner.close(),
  }
}
