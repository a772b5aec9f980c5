import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EmbeddedBroker } from '../../src/adapters/aedes/broker.js'
import { silentLogger } from '../../src/core/logger.js'
import { systemEnv } from './system.js'

export const PREFIX = 'nocturn/v1'

/** The users every broker under test knows; the same ACL as docs/broker.md. */
export const USERS = {
  device: { username: 'nocturn-device', password: 'device-secret-1' },
  phone: { username: 'nocturn-phones', password: 'phone-secret-1' },
  /** Another client on the household broker with write access to everything (e.g. a bridge). */
  intruder: { username: 'intruder', password: 'intruder-secret-1' },
  /** Per-phone broker users, named as the phone ids: each reads only its own conversation replies. */
  anna: { username: 'anna', password: 'anna-secret-1' },
  ben: { username: 'ben', password: 'ben-secret-1' },
  /** Home Assistant's broker user (docs/home-assistant.md). */
  homeAssistant: { username: 'homeassistant', password: 'ha-secret-1' },
  /** A device user the tests give narrower rights than the documented ACL (via `extraAcl`). */
  lockedDevice: { username: 'nocturn-locked', password: 'locked-secret-1' },
} as const

/** The ```acl block of a page in docs/, byte for byte. */
function aclBlock(page: string): string {
  const doc = readFileSync(new URL(`../../docs/${page}`, import.meta.url), 'utf8')
  const m = /\n```acl\n([\s\S]*?)```\n/.exec(doc)
  if (!m?.[1]) throw new Error(`docs/${page} has no \`\`\`acl block`)
  return m[1]
}

/**
 * The ACL of docs/broker.md, byte for byte: read out of its ```acl block, so the tests run on
 * exactly what a household is told to write.
 */
export function documentedAcl(): string {
  return aclBlock('broker.md')
}

/** The ACL lines docs/home-assistant.md tells a household to add, byte for byte. */
export function homeAssistantAcl(): string {
  return aclBlock('home-assistant.md')
}

/** The home action topic the documented ACL lets the device write (its example). */
export const HOME_TOPIC = 'zigbee2mqtt/front_door/set'

/** A broker a test can start, kill and bring back on the same port. */
export interface TestBroker {
  readonly name: string
  readonly url: string
  /** ws://127.0.0.1:<port> when the broker was asked for a WebSocket listener. */
  readonly wsUrl?: string
  /** What the broker wrote to stderr since it last started (Mosquitto: warnings and errors). */
  log?(): string
  start(): Promise<void>
  /** The broker vanishes at once (SIGKILL for Mosquitto). */
  kill(): Promise<void>
  stop(): Promise<void>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      s.close(() => resolve(port))
    })
  })
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = createConnection({ port, host: '127.0.0.1' })
      c.once('connect', () => {
        c.destroy()
        resolve(true)
      })
      c.once('error', () => resolve(false))
    })
    if (ok) return
    if (Date.now() > end) throw new Error(`nothing listening on 127.0.0.1:${port}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

export interface MosquittoOptions {
  readonly extraAcl?: readonly string[]
  /**
   * Also serve MQTT over WebSocket on this port (same users and ACL), as a phone app in a browser
   * needs. Mosquitto 2.0.11 binds a websockets listener on every interface whatever address is
   * written on its line, and refuses a websockets-only config: the TCP listener stays beside it.
   */
  readonly websocketPort?: number
  /** Log every packet received (Mosquitto's debug lines), for a test of the order a client sends. */
  readonly logPackets?: boolean
}

/** Mosquitto on a free loopback port, with a generated password file and ACL. */
export function mosquittoBroker(port: number, opts: MosquittoOptions = {}): TestBroker {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-mosq-'))
  chmodSync(dir, 0o700)
  const passwd = join(dir, 'passwd')
  writeFileSync(
    passwd,
    Object.values(USERS)
      .map((u) => `${u.username}:${u.password}\n`)
      .join(''),
    { mode: 0o600 },
  )
  // -U hashes the plain-text file in place, so no password passes through argv.
  const r = spawnSync('mosquitto_passwd', ['-U', passwd], { env: systemEnv(), encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`mosquitto_passwd failed: ${r.stderr}`)
  writeFileSync(
    join(dir, 'acl'),
    [
      documentedAcl(),
      // Test-only users after the documented ACL: someone else with write access everywhere,
      // and the shared phone user of the doc's one-user-for-all-phones variant.
      `user ${USERS.intruder.username}`,
      `topic readwrite ${PREFIX}/#`,
      '',
      `user ${USERS.phone.username}`,
      `topic read ${PREFIX}/#`,
      `topic write ${PREFIX}/+/approvals/+/decision`,
      '',
      ...(opts.extraAcl ?? []),
      '',
    ].join('\n'),
    { mode: 0o600 },
  )
  writeFileSync(
    join(dir, 'mosquitto.conf'),
    [
      `listener ${port} 127.0.0.1`,
      ...(opts.websocketPort !== undefined
        ? [`listener ${opts.websocketPort}`, 'protocol websockets']
        : []),
      'allow_anonymous false',
      `password_file ${passwd}`,
      `acl_file ${join(dir, 'acl')}`,
      'persistence false',
      // Without it Mosquitto's small writes wait on the client's delayed ACK (~40 ms each).
      'set_tcp_nodelay true',
      // Started as root in CI: stay root rather than drop to a user that cannot read this folder.
      'user root',
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      ...(opts.logPackets ? ['log_type debug'] : []),
      '',
    ].join('\n'),
    { mode: 0o600 },
  )
  let child: ChildProcess | undefined
  let stderr = ''
  const broker: TestBroker = {
    name: 'mosquitto',
    url: `mqtt://127.0.0.1:${port}`,
    ...(opts.websocketPort !== undefined && { wsUrl: `ws://127.0.0.1:${opts.websocketPort}` }),
    log: () => stderr,
    async start() {
      stderr = ''
      const c = spawn('mosquitto', ['-c', join(dir, 'mosquitto.conf')], {
        env: systemEnv(),
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      c.stderr?.on('data', (d: Buffer) => {
        stderr += d.toString()
      })
      child = c
      try {
        await waitForPort(port, 5000)
        if (opts.websocketPort !== undefined) await waitForPort(opts.websocketPort, 5000)
      } catch (err) {
        c.kill('SIGKILL')
        throw new Error(`mosquitto did not start: ${stderr || String(err)}`)
      }
    },
    async kill() {
      await stopChild(child, 'SIGKILL')
      child = undefined
    },
    async stop() {
      await stopChild(child, 'SIGTERM')
      child = undefined
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return broker
}

async function stopChild(c: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!c || c.exitCode !== null || c.signalCode !== null) return
  await new Promise<void>((resolve) => {
    c.once('exit', () => resolve())
    c.kill(signal)
  })
}

/** The embedded broker with the same users and rules. */
export function aedesBroker(port: number): TestBroker {
  let b: EmbeddedBroker | undefined
  const make = () =>
    new EmbeddedBroker({
      port,
      prefix: PREFIX,
      logger: silentLogger,
      users: [
        { ...USERS.device, role: 'device' },
        { ...USERS.phone, role: 'phone' },
        { ...USERS.intruder, role: 'device' },
        { ...USERS.anna, role: 'phone' },
        { ...USERS.ben, role: 'phone' },
      ],
    })
  return {
    name: 'aedes',
    url: `mqtt://127.0.0.1:${port}`,
    async start() {
      b = make()
      await b.start()
    },
    async kill() {
      await b?.stop()
      b = undefined
    },
    async stop() {
      await b?.stop()
      b = undefined
    },
  }
}
