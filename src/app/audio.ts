import { CaptureWatchdog } from '../audio/capture-watchdog.js'
import { type EchoMode, MicGate } from '../audio/mic-gate.js'
import type { MicReads } from '../audio/read-cadence.js'
import { DEFAULT_ECHO_TAIL_MS } from '../core/defaults.js'
import type { NocturnError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { AudioIn, AudioOut } from '../ports/audio.js'
import type { Clock } from '../ports/clock.js'

type AudioBackend = 'alsa' | 'portaudio' | 'wav'

export interface AudioConfig {
  readonly backend: AudioBackend
  /** A named PCM (alsa, portaudio) or a WAV path (wav). */
  readonly capture: string
  readonly playback: string
  readonly echo: EchoMode
  readonly echoTailMs?: number
  readonly leadMs?: number
  /** wav only: deliver the microphone file in real time, and start again at its end. */
  readonly wavPaced?: boolean
  readonly wavLoop?: boolean
}

export interface Audio {
  /** The microphone as the rest of Nocturn sees it: gated for echo, mutable, watched for stalls. */
  readonly mic: MicGate
  readonly speaker: AudioOut
  /** How often the microphone device is read (MicRouter): ALSA's alone; the others as they come. */
  readonly reads?: MicReads
}

/**
 * Wires the configured audio backend: its microphone behind the stall watchdog and the mute/echo
 * gate, its speaker behind the shared paced buffer. Only the chosen backend's modules are loaded,
 * so a machine without naudiodon never touches it. Device errors go to `onError` (the LED's
 * `error` state, the log); the backends keep retrying on their own.
 */
export async function openAudio(
  config: AudioConfig,
  deps: {
    clock: Clock
    logger: Logger
    onError: (e: NocturnError) => void
    /** Where mute is held (the device's state); the gate reads it at every frame. */
    mute?: { readonly muted: boolean }
  },
): Promise<Audio> {
  const { clock, logger, onError } = deps
  // The two device backends take the same options: their mic a PCM, their speaker a PCM and a lead.
  const capture = { device: config.capture, clock, logger }
  const playback = { device: config.playback, clock, logger, leadMs: config.leadMs, onError }
  let source: AudioIn
  let speaker: AudioOut
  let reads: MicReads | undefined
  if (config.backend === 'alsa') {
    const { ArecordMic } = await import('../adapters/alsa/arecord-mic.js')
    const { createAlsaSpeaker } = await import('../adapters/alsa/alsa-speaker.js')
    const arecord = new ArecordMic(capture)
    source = arecord
    reads = arecord.reads
    speaker = createAlsaSpeaker(playback).speaker
  } else if (config.backend === 'portaudio') {
    const { PortAudioMic } = await import('../adapters/portaudio/portaudio-mic.js')
    const { createPortAudioSpeaker } = await import('../adapters/portaudio/portaudio-speaker.js')
    source = new PortAudioMic(capture)
    speaker = createPortAudioSpeaker(playback).speaker
  } else {
    const { WavMic } = await import('../adapters/wav/wav-mic.js')
    const { createWavSpeaker } = await import('../adapters/wav/wav-speaker.js')
    source = new WavMic({
      path: config.capture,
      clock,
      paced: config.wavPaced,
      loop: config.wavLoop,
    })
    speaker = createWavSpeaker({ path: config.playback, clock, leadMs: config.leadMs }).speaker
  }
  // A file ends; only a device can stall.
  const watched =
    config.backend === 'wav'
      ? source
      : new CaptureWatchdog({ source, clock, deviceName: config.capture, logger })
  const mic = new MicGate({
    source: watched,
    speaker,
    clock,
    echo: config.echo,
    tailMs: config.echoTailMs ?? DEFAULT_ECHO_TAIL_MS,
    ...(deps.mute && { mute: deps.mute }),
  })
  return { mic, speaker, ...(reads && { reads }) }
}
