import { SAID_MAX_CHARS } from './limits.js'

/** Ends words cut to fit `SAID_MAX_CHARS`, so the card shows that more was said. */
const CUT_MARK = '…'

/**
 * The `said` of a request (docs/protocol.md, "What was said"): the words with their runs of
 * whitespace made one space, and cut at the end — the first 199 characters and "…" — when longer
 * than 200. A cut never splits a surrogate pair. Undefined when nothing was said.
 */
export function saidForRequest(words: string | undefined): string | undefined {
  const text = (words ?? '').replace(/\s+/g, ' ').trim()
  if (text === '') return undefined
  if (text.length <= SAID_MAX_CHARS) return text
  let end = SAID_MAX_CHARS - CUT_MARK.length
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return `${text.slice(0, end).trimEnd()}${CUT_MARK}`
}
