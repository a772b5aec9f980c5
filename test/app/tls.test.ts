import { spawnSync } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { tls } from '../../src/app/commands/tls.js'
import { missingCommands } from '../helpers/system.js'

async function runTls(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out = new PassThrough()
  const err = new PassThrough()
  const chunks = { out: '', err: '' }
  out.on('data', (c: Buffer) => {
    chunks.out += c.toString('utf8')
  })
  err.on('data', (c: Buffer) => {
    chunks.err += c.toString('utf8')
  })
  const code = await tls(args, { out, err, env: {} })
  return { code, ...chunks }
}

const skip = missingCommands('openssl')

describe.skipIf(skip !== undefined)('nocturn tls', () => {
  it('makes a CA and a device certificate for the LAN names that verifies against it; keys 0600; a second run keeps the CA and renews the certificate', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'nocturn-tls-')), 'tls')
    const args = ['--dir', dir, '--host', 'kitchen', '--ip', '192.168.1.23', '--ip', 'fd00::23']
    const first = await runTls([...args, '--ip', '203.0.113.9'])
    expect(first.err).toBe('')
    expect(first.code).toBe(0)
    expect(first.out).toContain(`Made a new household CA: ${join(dir, 'ca.crt')}`)
    expect(first.out).toContain('Left out (not a private address): 203.0.113.9')
    expect(first.out).toContain('Android:')
    expect(first.out).toContain('iPhone:')

    const ca = new X509Certificate(readFileSync(join(dir, 'ca.crt')))
    const leaf = new X509Certificate(readFileSync(join(dir, 'device.crt')))
    expect(ca.ca).toBe(true)
    expect(leaf.ca).toBe(false)
    expect(leaf.verify(ca.publicKey)).toBe(true)
    expect(leaf.checkIssued(ca)).toBe(true)
    expect(leaf.subjectAltName?.split(', ').sort()).toEqual(
      [
        'DNS:kitchen',
        'DNS:kitchen.local',
        'IP Address:192.168.1.23',
        'IP Address:FD00:0:0:0:0:0:0:23',
      ].sort(),
    )
    expect(leaf.checkHost('kitchen.local')).toBe('kitchen.local')
    expect(leaf.checkIP('192.168.1.23')).toBe('192.168.1.23')
    expect(leaf.checkIP('203.0.113.9')).toBeUndefined()
    // openssl's own verification, name constraints included.
    const v = spawnSync(
      'openssl',
      ['verify', '-CAfile', join(dir, 'ca.crt'), '-purpose', 'sslserver', join(dir, 'device.crt')],
      { encoding: 'utf8' },
    )
    expect(v.stdout.trim()).toBe(`${join(dir, 'device.crt')}: OK`)
    for (const key of ['ca.key', 'device.key']) {
      expect(statSync(join(dir, key)).mode & 0o777).toBe(0o600)
    }
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    // Nothing secret in what it printed.
    expect(first.out).not.toContain('PRIVATE KEY')

    const caBytes = readFileSync(join(dir, 'ca.crt'))
    const caKey = readFileSync(join(dir, 'ca.key'))
    const second = await runTls(args)
    expect(second.code).toBe(0)
    expect(second.out).toContain(`Kept the household CA: ${join(dir, 'ca.crt')}`)
    expect(readFileSync(join(dir, 'ca.crt')).equals(caBytes)).toBe(true)
    expect(readFileSync(join(dir, 'ca.key')).equals(caKey)).toBe(true)
    const renewed = new X509Certificate(readFileSync(join(dir, 'device.crt')))
    expect(renewed.serialNumber).not.toBe(leaf.serialNumber)
    expect(renewed.verify(ca.publicKey)).toBe(true)
    expect(statSync(join(dir, 'device.key')).mode & 0o777).toBe(0o600)
  })

  it('refuses a host name with dots or a bad --name, and makes nothing', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'nocturn-tls-')), 'tls')
    const r = await runTls(['--dir', dir, '--host', 'a.b.c', '--no-ips'])
    expect(r.code).toBe(2)
    expect(r.err).toContain('--host must be a host name without dots')
    const n = await runTls(['--dir', dir, '--host', 'kitchen', '--name', 'bad name'])
    expect(n.code).toBe(2)
    expect(n.err).toContain('is not a DNS name')
  })
})
