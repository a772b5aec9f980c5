// The package ships no types; the RFC 8291 test calls its encrypt with the example's keys and salt.
declare module 'http_ece' {
  import type { ECDH } from 'node:crypto'

  interface EncryptParams {
    version: 'aes128gcm'
    dh: string
    privateKey: ECDH
    salt: string
    authSecret: string
  }
  const ece: { encrypt(buffer: Buffer, params: EncryptParams): Buffer }
  export default ece
}
