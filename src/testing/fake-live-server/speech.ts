import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The canned speech the fake server plays: short real spoken phrases (espeak-ng, made by
 * scripts/make-speech-fixtures.sh), raw 24 kHz mono s16le in `fixtures/speech/<name>.s16`, with
 * the words in `<name>.txt` for the transcription.
 */
export interface Phrase {
  readonly name: string
  readonly text: string
  readonly pcm: Buffer
}

export const SPEECH_RATE_HZ = 24_000

/** Finds `fixtures/speech` from this module upwards (works from src/ under tsx and from dist/). */
function speechDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(dir, 'fixtures', 'speech')
    if (existsSync(candidate)) return candidate
    const up = dirname(dir)
    if (up === dir) throw new Error('fixtures/speech not found above the fake live server')
    dir = up
  }
}

const cache = new Map<string, Phrase>()

export function phrase(name: string): Phrase {
  const hit = cache.get(name)
  if (hit) return hit
  const dir = speechDir()
  const pcm = readFileSync(join(dir, `${name}.s16`))
  const text = readFileSync(join(dir, `${name}.txt`), 'utf8').trim()
  const p = { name, text, pcm }
  cache.set(name, p)
  return p
}

export function phraseNames(): string[] {
  return readdirSync(speechDir())
    .filter((f) => f.endsWith('.s16'))
    .map((f) => f.slice(0, -4))
    .sort()
}
