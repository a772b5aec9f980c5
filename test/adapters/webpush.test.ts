import { createECDH } from 'node:crypto'
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ece from 'http_ece'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadOrCreateVapidKeys } from '../../src/adapters/webpush/vapid-key-file.js'
import { WebPushSender } from '../../src/adapters/webpush/web-push-sender.js'
import { decryptPush, PushReceiver } from '../helpers/push-receiver.js'

/** RFC 8291 §5 and Appendix A: the example's keys, salt, plaintext and the encrypted message. */
const RFC = {
  plaintext: 'V2hlbiBJIGdyb3cgdXAsIEkgd2FudCB0byBiZSBhIHdhdGVybWVsb24',
  asPrivate: 'yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw',
  uaPublic:
    'BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4',
  uaPrivate: 'q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94',
  salt: 'DGv6ra1nlYgDCS1FRnbzlw',
  auth: 'BTBZMqHH6r4Tts7J_aSIgg',
  message:
    'DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN',
}
const b64 = (s: string) => Buffer.from(s, 'base64url')

describe('Web Push encryption (RFC 8291)', () => {
  it("the encryption step web-push runs (http_ece, aes128gcm) gives the RFC's published message from its keys and salt", () => {
    // web-push draws the salt and the local key pair itself; it hands both to http_ece's
    // encrypt, which takes them, so the step is run here with the example's.
    const local = createECDH('prime256v1')
    local.setPrivateKey(b64(RFC.asPrivate))
    const out = ece.encrypt(b64(RFC.plaintext), {
      version: 'aes128gcm',
      dh: RFC.uaPublic,
      privateKey: local,
      salt: RFC.salt,
      authSecret: RFC.auth,
    })
    expect(out.toString('base64url')).toBe(RFC.message)
  })

  it("the test receiver decrypts the RFC's published message to its plaintext", () => {
    const plain = decryptPush(b64(RFC.message), b64(RFC.uaPrivate), b64(RFC.auth))
    expect(plain.toString('utf8')).toBe('When I grow up, I want to be a watermelon')
    // A flipped byte is refused, so the check above can fail.
    const bad = Buffer.from(b64(RFC.message))
    bad[bad.length - 1] = (bad[bad.length - 1] ?? 0) ^ 1
    expect(() => decryptPush(bad, b64(RFC.uaPrivate), b64(RFC.auth))).toThrow()
  })
})

describe('WebPushSender against a push service on loopback', () => {
  let receiver: PushReceiver
  let dir: string
  beforeAll(async () => {
    receiver = await PushReceiver.start()
    dir = mkdtempSync(join(tmpdir(), 'nocturn-vapid-'))
  })
  afterAll(() => receiver.close())

  it('sends a push the subscription alone can decrypt, with a VAPID header signed by the device key for the service origin', async () => {
    const keys = loadOrCreateVapidKeys(join(dir, 'a', 'vapid.json'))
    const sender = new WebPushSender({ keys, subject: 'mailto:house@example.org' })
    const sub = receiver.subscription('anna-phone')
    const before = Math.floor(Date.now() / 1000)
    const r = await sender.send(sub, Buffer.from('{"hello":"anna"}'), {
      ttlSeconds: 120,
      topic: 'approval-1',
      urgency: 'high',
    })
    expect(r).toEqual({ kind: 'delivered', status: 201 })
    const [got] = await receiver.waitFor(1)
    expect(got?.plaintext).toBe('{"hello":"anna"}')
    expect(got?.vapid.key).toBe(keys.publicKey)
    expect(got?.vapid.claims.aud).toBe(receiver.origin)
    expect(got?.vapid.claims.sub).toBe('mailto:house@example.org')
    expect(got?.vapid.claims.exp).toBeGreaterThan(before)
    expect(got?.vapid.claims.exp).toBeLessThanOrEqual(before + 24 * 3600 + 5)
    expect(got?.headers.ttl).toBe('120')
    expect(got?.headers.topic).toBe('approval-1')
    expect(got?.headers.urgency).toBe('high')
    // The private key is nowhere in what left.
    expect(JSON.stringify(got?.headers)).not.toContain(keys.privateKey)
  })

  it('says gone on 404 and 410, retry on 429 and 5xx, failed on 400', async () => {
    const keys = loadOrCreateVapidKeys(join(dir, 'b.json'))
    const sender = new WebPushSender({ keys, subject: 'mailto:house@example.org' })
    const sub = receiver.subscription('statuses')
    receiver.answer('statuses', 410, 404, 429, 503, 403)
    const send = () => sender.send(sub, Buffer.from('x'), { ttlSeconds: 10 })
    expect((await send()).kind).toBe('gone')
    expect((await send()).kind).toBe('gone')
    expect(await send()).toMatchObject({ kind: 'retry', status: 429, retryAfterMs: 0 })
    expect(await send()).toMatchObject({ kind: 'retry', status: 503 })
    expect(await send()).toMatchObject({ kind: 'failed', status: 403 })
  })

  it('keeps the device key pair across starts, in a 0600 file, and refuses a damaged file rather than replacing it', () => {
    const path = join(dir, 'keep', 'vapid.json')
    const first = loadOrCreateVapidKeys(path)
    expect(loadOrCreateVapidKeys(path)).toEqual(first)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(b64(first.publicKey)).toHaveLength(65)
    writeFileSync(path, 'not json')
    expect(() => loadOrCreateVapidKeys(path)).toThrow(/not a VAPID key file; move it aside/)
    expect(readFileSync(path, 'utf8')).toBe('not json')
  })
})
