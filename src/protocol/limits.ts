// No import here: the phone app bundles this beside the device (docs/protocol.md, "Transport").

/** The protocol version every payload carries as `v`. */
export const PROTOCOL_VERSION = 1

/** No payload on any protocol topic may be larger than this (bytes of UTF-8 JSON). */
export const MAX_PAYLOAD_BYTES = 16 * 1024
