import { readFileSync } from 'node:fs'

export interface GeminiKey {
  readonly key: string
  /** Where it came from, for doctor (never the key itself). */
  readonly source: string
}

/**
 * The API key, until config exists: `GEMINI_API_KEY`, or the first line of the file named by
 * `GEMINI_API_KEY_FILE` (e.g. a systemd credential). Never from argv, where `ps` shows it.
 */
export function readGeminiKey(env: NodeJS.ProcessEnv = process.env): GeminiKey | undefined {
  const direct = env.GEMINI_API_KEY?.trim()
  if (direct) return { key: direct, source: 'GEMINI_API_KEY' }
  const file = env.GEMINI_API_KEY_FILE?.trim()
  if (!file) return undefined
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new Error(
      `GEMINI_API_KEY_FILE names ${file}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    )
  }
  const key = text.split('\n')[0]?.trim()
  return key ? { key, source: `GEMINI_API_KEY_FILE (${file})` } : undefined
}
