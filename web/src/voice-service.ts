import { h } from './dom.js'

/** One live provider's last attempt, as the speaker's status carries it (docs/protocol.md). */
export interface ProviderHealth {
  readonly provider: string
  readonly ok: boolean
  readonly reason?: string
}

const NAMES: Readonly<Record<string, string>> = { gemini: 'Gemini', openai: 'OpenAI' }

/** Why a provider failed, in a household's words, with what to do where there is something. */
const WORDS: Readonly<Record<string, string>> = {
  offline: 'cannot be reached — is the internet down?',
  timeout: 'did not answer in time',
  key_refused: 'refused the API key — check the key in the speaker’s settings',
  quota: 'has used up its quota for now',
  refused: 'refused the session — check the model and the account',
  service_error: 'had an error on its side',
}

/** The status's `providers`, each entry checked; anything malformed is left out. */
export function parseProviders(raw: unknown): ProviderHealth[] | undefined {
  if (!Array.isArray(raw)) return undefined
  const out: ProviderHealth[] = []
  for (const p of raw.slice(0, 8) as unknown[]) {
    if (typeof p !== 'object' || p === null) continue
    const { provider, ok, reason } = p as Record<string, unknown>
    if (typeof provider !== 'string' || provider === '' || typeof ok !== 'boolean') continue
    out.push({ provider: provider.slice(0, 64), ok, ...(typeof reason === 'string' && { reason }) })
  }
  return out
}

/**
 * A line in words for each voice service whose last attempt failed, and whether the speaker can
 * answer at all meanwhile; nothing while every one works.
 */
export function voiceServiceView(
  providers: readonly ProviderHealth[] | undefined,
): HTMLElement | null {
  const failing = (providers ?? []).filter((p) => !p.ok)
  if (failing.length === 0) return null
  const working = (providers ?? []).find((p) => p.ok)
  const lines = failing.map(
    (p) => `${NAMES[p.provider] ?? p.provider} ${WORDS[p.reason ?? ''] ?? 'could not be reached'}.`,
  )
  const after = working
    ? ` Answering with ${NAMES[working.provider] ?? working.provider} meanwhile.`
    : ' The speaker cannot answer until it is fixed.'
  return h(
    'p',
    {
      class: 'problem voice-service',
      'data-voice-service': failing.map((p) => p.reason).join(' '),
    },
    `Voice service: ${lines.join(' ')}${after}`,
  )
}
