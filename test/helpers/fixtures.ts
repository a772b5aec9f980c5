import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseWav } from '../../src/audio/wav.js'

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures')

export interface VadManifest {
  sampleRateHz: number
  speech: { file: string; onsetMs: number }[]
  nonSpeech: string[]
}

export function vadManifest(): VadManifest {
  return JSON.parse(readFileSync(join(FIXTURES, 'vad', 'manifest.json'), 'utf8')) as VadManifest
}

/** A committed speech or noise clip as 16 kHz S16LE mono. */
export function vadClip(file: string): Uint8Array {
  return parseWav(readFileSync(join(FIXTURES, 'vad', file)), 16_000, file).pcm
}

/** Index of `needle` in `hay`, or -1. */
export function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  return Buffer.from(hay.buffer, hay.byteOffset, hay.byteLength).indexOf(
    Buffer.from(needle.buffer, needle.byteOffset, needle.byteLength),
  )
}
