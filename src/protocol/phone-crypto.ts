import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'

/**
 * The phones' hashing, from @noble/hashes: a LAN page on plain HTTP has no crypto.subtle, and the
 * app must verify there too; the terminal phone uses the very same code, so the two cannot drift.
 * Only getRandomValues (on every page, in every worker and in Node 20) comes from the platform.
 */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)))
}

export function sha256Bytes(text: string): Uint8Array {
  return sha256(utf8ToBytes(text))
}

export function hmacHex(key: Uint8Array, text: string): string {
  return bytesToHex(hmac(sha256, key, utf8ToBytes(text)))
}

/** Constant-time comparison of two lowercase hex MACs of 64 characters. */
export function macEquals(expected: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length !== 64 || expected.length !== 64) return false
  let diff = 0
  for (let i = 0; i < 64; i++) diff |= expected.charCodeAt(i) ^ given.charCodeAt(i)
  return diff === 0
}

/** 18 random bytes, base64url: the nonce shape docs/protocol.md asks for. */
export function newNonce(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(18)))
}

export function base64url(bytes: Uint8Array): string {
  let s = ''
  for (const b of bytes) s += String.fromCharCode(b)
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

export function fromBase64url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/')
  try {
    const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4))
    return Uint8Array.from(bin, (c) => c.charCodeAt(0))
  } catch {
    return undefined
  }
}
