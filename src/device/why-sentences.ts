import type { ProviderFailure, UnreachableReason } from '../ports/provider-listener.js'

/**
 * What the room hears when no provider can be reached, one short sentence per reason, in words a
 * household can act on (English for now, whatever the persona's language: docs/voice-driver.md).
 */
export const WHY_SENTENCES: Readonly<Record<UnreachableReason, string>> = {
  offline: "I can't reach the internet right now.",
  timeout: "My voice service isn't answering right now. Try again in a minute.",
  key_refused: 'My key was refused — check the phone app.',
  quota: "I've used up my quota for now.",
  refused: 'My voice service turned me away — check the phone app.',
  service_error: 'My voice service has a problem on its side. Try again in a little while.',
}

/** Every reason, in the order the sentences are made. */
export const WHY_REASONS = Object.keys(WHY_SENTENCES) as UnreachableReason[]

/**
 * The one reason said for a failed attempt: the first provider's that a person can act on (a key,
 * a quota, a refusal, the service's own error: that provider was reached, so the internet is up),
 * else the first provider's (offline or timed out).
 */
export function reasonToSay(failures: readonly ProviderFailure[]): UnreachableReason {
  const actionable = failures.find((f) => f.reason !== 'offline' && f.reason !== 'timeout')
  return (actionable ?? failures[0])?.reason ?? 'offline'
}

/** The persona's language when it is English, else British English: the sentences are English. */
export function englishOf(language: string): string {
  return /^en(-|$)/i.test(language) ? language : 'en-GB'
}
