/**
 * Why this phone refused to believe a message, as a sentence a household reads (issue 23, finding
 * 6); the protocol's reason code (docs/protocol.md) stays one tap away beside it.
 */
const REQUEST_WORDS: Record<string, string> = {
  oversized: 'A message was too large to be from the speaker.',
  'malformed-json': 'A message was garbled: not something the speaker sends.',
  'invalid-payload': 'A message was missing something every request from the speaker has.',
  'id-mismatch': 'A request was filed under another request’s name.',
  'wrong-device': 'A request named another speaker than this one.',
  'wrong-phone': 'An answer was addressed to another phone.',
  'digest-mismatch':
    'A request was changed after the speaker signed it (its words, action or details differ).',
  'not-signed-for-this-phone': 'A request was not signed for this phone.',
  'bad-mac': 'A message was not signed with this phone’s key: someone else wrote it.',
  expired: 'A request arrived after its time had run out.',
}

export function refusalWords(reason: string): string {
  const outcome = reason.startsWith('outcome ')
  const code = outcome ? reason.slice('outcome '.length) : reason
  const words = REQUEST_WORDS[code] ?? 'A message could not be checked.'
  return outcome ? `How a request ended could not be believed. ${words}` : words
}

/**
 * The speaker refused this phone's yes at the owner's check (docs/protocol.md, "The owner's yes"):
 * what the card says, by the reason the speaker gave. The request is still pending.
 */
export function ownerRefusedWords(reason: unknown, speaker: string): string {
  switch (reason) {
    case 'no-credential':
    case 'unknown-credential':
      return `${speaker} does not know this phone's fingerprint, face or screen lock (any more), so it did not take your yes. Register it again under Speakers (it may take pairing again), or ask someone else.`
    case 'not-user-verified':
      return `${speaker} did not take your yes: the fingerprint, face or screen lock was not confirmed. Tap Approve to try again.`
    default:
      return `${speaker} could not verify your fingerprint, face or screen lock for this request, so it did not take your yes. Tap Approve to try again.`
  }
}
