// No import here: the phone app bundles this beside the device (docs/protocol.md, "Transport").

/** The protocol version every payload carries as `v`. */
export const PROTOCOL_VERSION = 1

/** No payload on any protocol topic may be larger than this (bytes of UTF-8 JSON). */
export const MAX_PAYLOAD_BYTES = 16 * 1024

/**
 * A request's `said` (the words that led to it) is at most this many characters (UTF-16 code
 * units, as JavaScript counts): enough for a sentence, short enough for a card.
 */
export const SAID_MAX_CHARS = 200
