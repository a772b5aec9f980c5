import { dirname } from 'node:path'
import { errorText } from '../../core/errors.js'
import type { PanelController } from '../../panel/panel-controller.js'
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
 * The microphone and the speaker on the configured backend. A failing device shows as `error` on
 * the LED. `voiceSpeaker` is the speaker the voice driver writes to, its drops told to `onDrop`.
 */
export async function openSound(
  { config: c, clock, log, closers }: Composition,
  panel: PanelController,
  options: SoundOptions,
): Promise<Audio & { voiceSpeaker: AudioOut }> {
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
        panel.setActivity('error')
      },
    },
  )
  closers.add(() => audio.speaker.close())
  const voiceSpeaker = options.onDrop ? observedDrops(audio.speaker, options.onDrop) : audio.speaker
  return { ...audio, voiceSpeaker }
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
