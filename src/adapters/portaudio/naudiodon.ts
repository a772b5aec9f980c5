import { createRequire } from 'node:module'
import { errorText, NocturnError } from '../../core/errors.js'

/** The part of naudiodon 2.3.x Nocturn uses (it ships no types). */
export interface NaudiodonDevice {
  readonly id: number
  readonly name: string
  readonly maxInputChannels: number
  readonly maxOutputChannels: number
  readonly hostAPIName: string
}

interface NaudiodonStreamOptions {
  readonly channelCount: number
  readonly sampleFormat: number
  readonly sampleRate: number
  readonly deviceId: number
  readonly closeOnError: boolean
  readonly framesPerBuffer: number
  readonly maxQueue: number
  readonly highwaterMark?: number
}

export interface NaudiodonStream {
  start(): void
  write(chunk: Buffer, cb?: (err?: Error | null) => void): boolean
  destroy(): void
  quit(cb?: () => void): void
  on(event: 'data', fn: (chunk: Buffer) => void): this
  on(event: 'error', fn: (e: Error) => void): this
}

export interface Naudiodon {
  readonly SampleFormat16Bit: number
  getDevices(): NaudiodonDevice[]
  AudioIO: new (options: {
    inOptions?: NaudiodonStreamOptions
    outOptions?: NaudiodonStreamOptions
  }) => NaudiodonStream
}

let cached: Naudiodon | undefined

/**
 * Loads naudiodon on first use only — it is an optional dependency that does not build on every
 * machine (not on either Raspberry Pi OS userland), so merely importing Nocturn must not need it.
 * Its `segfault-handler` is replaced by a no-op package through npm `overrides` (package.json).
 */
export function loadNaudiodon(): Naudiodon {
  if (cached) return cached
  try {
    cached = createRequire(import.meta.url)('naudiodon') as Naudiodon
    return cached
  } catch (e) {
    throw new NocturnError(
      'NOC_ERR_AUDIO_BACKEND_UNAVAILABLE',
      `the PortAudio backend needs naudiodon, which is not installed or did not build here (${errorText(e).split('\n')[0]}); use the ALSA backend`,
      { cause: e },
    )
  }
}
