/**
 * MQTT 3.1.1 packets, only the subset the phone app speaks (docs/phone-app.md): encode what the
 * client sends, decode what a broker sends. Pure bytes in, bytes out; the session is client.ts.
 */

import { MAX_PAYLOAD_BYTES } from '../../../src/protocol/limits.js'

const utf8 = new TextEncoder()
const fromUtf8 = new TextDecoder()

/** A packet from the broker, already parsed. */
export type Incoming =
  | { type: 'connack'; code: number }
  | { type: 'publish'; topic: string; payload: Uint8Array; qos: number; id: number }
  | { type: 'puback'; id: number }
  | { type: 'suback'; id: number; codes: number[] }
  | { type: 'pingresp' }

/** The fixed header's remaining length: 7 bits a byte, the high bit says "more follows". */
function lengthBytes(n: number): number[] {
  const out: number[] = []
  do {
    let b = n % 128
    n = Math.floor(n / 128)
    if (n > 0) b |= 0x80
    out.push(b)
  } while (n > 0)
  return out
}

function packet(first: number, ...parts: Uint8Array[]): Uint8Array {
  const len = parts.reduce((s, p) => s + p.byteLength, 0)
  const head = [first, ...lengthBytes(len)]
  const out = new Uint8Array(head.length + len)
  out.set(head)
  let at = head.length
  for (const p of parts) {
    out.set(p, at)
    at += p.byteLength
  }
  return out
}

const u16 = (n: number) => new Uint8Array([n >> 8, n & 0xff])

/** A length-prefixed UTF-8 string, as every MQTT string field is. */
function str(s: string): Uint8Array {
  const b = utf8.encode(s)
  const out = new Uint8Array(2 + b.byteLength)
  out.set(u16(b.byteLength))
  out.set(b, 2)
  return out
}

export interface ConnectFields {
  readonly clientId: string
  readonly username?: string | undefined
  readonly password?: string | undefined
  readonly keepalive: number
}

/** CONNECT with a clean session (the app keeps no session at the broker). */
export function connectPacket(f: ConnectFields): Uint8Array {
  let flags = 0x02
  if (f.username !== undefined) flags |= 0x80
  if (f.password !== undefined) flags |= 0x40
  const parts: Uint8Array[] = [
    str('MQTT'),
    new Uint8Array([4, flags]),
    u16(f.keepalive),
    str(f.clientId),
  ]
  if (f.username !== undefined) parts.push(str(f.username))
  if (f.password !== undefined) parts.push(str(f.password))
  return packet(0x10, ...parts)
}

export function publishPacket(topic: string, payload: Uint8Array, id: number): Uint8Array {
  // QoS 1 (bits 1–2 = 01), not retained, first delivery.
  return packet(0x32, str(topic), u16(id), payload)
}

export function subscribePacket(id: number, filters: readonly string[], qos: number): Uint8Array {
  const parts: Uint8Array[] = [u16(id)]
  for (const f of filters) parts.push(str(f), new Uint8Array([qos]))
  // SUBSCRIBE's reserved flags must be 0010.
  return packet(0x82, ...parts)
}

export const pubackPacket = (id: number): Uint8Array => packet(0x40, u16(id))
export const pingreqPacket = (): Uint8Array => new Uint8Array([0xc0, 0])
export const disconnectPacket = (): Uint8Array => new Uint8Array([0xe0, 0])

/**
 * A packet's body is held up to this many bytes: the largest payload the protocol allows, one
 * byte more (so what is kept of a larger one is still too large, and refused as `oversized` where
 * the payload is checked), and room for the topic and packet id before it.
 */
const BODY_KEPT = MAX_PAYLOAD_BYTES + 1 + 1024

/**
 * Reassembles packets from WebSocket frames: a frame may carry several packets or part of one,
 * so bytes are kept until a whole packet is there. Of a packet larger than the protocol allows,
 * only its first BODY_KEPT bytes are held, and the rest is skipped as it arrives: a broker (or
 * anyone who may publish on the household's topics) cannot make the app hold megabytes, and a
 * QoS 1 publish still carries its id, so it is acknowledged and the broker sends on.
 */
export class PacketReader {
  #buf = new Uint8Array(0)
  /** Bytes of an oversized packet still to come and be dropped. */
  #skip = 0

  /** Adds a frame's bytes; returns every packet now complete (unknown types are skipped). */
  push(bytes: Uint8Array): Incoming[] {
    if (this.#skip > 0) {
      const dropped = Math.min(this.#skip, bytes.byteLength)
      this.#skip -= dropped
      bytes = bytes.subarray(dropped)
    }
    const joined = new Uint8Array(this.#buf.byteLength + bytes.byteLength)
    joined.set(this.#buf)
    joined.set(bytes, this.#buf.byteLength)
    const out: Incoming[] = []
    let at = 0
    for (;;) {
      const head = headerAt(joined, at)
      if (!head) break
      const kept = Math.min(head.length, BODY_KEPT)
      if (head.bodyAt + kept > joined.byteLength) break
      const body = joined.subarray(head.bodyAt, head.bodyAt + kept)
      const p = parse(joined[at] ?? 0, body)
      if (p) out.push(p)
      const end = head.bodyAt + head.length
      if (end > joined.byteLength) {
        // Oversized and not all here: what has not come yet is dropped as it comes.
        this.#skip = end - joined.byteLength
        at = joined.byteLength
        break
      }
      at = end
    }
    this.#buf = joined.slice(at)
    return out
  }
}

/** The remaining length at `at`, or undefined while its bytes have not all arrived. */
function headerAt(b: Uint8Array, at: number): { length: number; bodyAt: number } | undefined {
  let length = 0
  let mul = 1
  for (let i = at + 1; i < at + 5; i++) {
    const byte = b[i]
    if (byte === undefined) return undefined
    length += (byte & 0x7f) * mul
    mul *= 128
    if ((byte & 0x80) === 0) return { length, bodyAt: i + 1 }
  }
  throw new Error('malformed MQTT remaining length')
}

const id16 = (b: Uint8Array, at: number) => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0)

function parse(first: number, body: Uint8Array): Incoming | undefined {
  switch (first >> 4) {
    case 2:
      return { type: 'connack', code: body[1] ?? 0 }
    case 3: {
      // Flags: DUP (bit 3) and RETAIN (bit 0) change nothing here; QoS is bits 1–2.
      const qos = (first >> 1) & 3
      const tlen = id16(body, 0)
      const topic = fromUtf8.decode(body.subarray(2, 2 + tlen))
      let at = 2 + tlen
      let id = 0
      if (qos > 0) {
        id = id16(body, at)
        at += 2
      }
      return { type: 'publish', topic, payload: body.slice(at), qos, id }
    }
    case 4:
      return { type: 'puback', id: id16(body, 0) }
    case 9:
      return { type: 'suback', id: id16(body, 0), codes: [...body.subarray(2)] }
    case 13:
      return { type: 'pingresp' }
    default:
      return undefined
  }
}
