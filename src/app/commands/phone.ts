import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { realClock } from '../../adapters/clock/real-clock.js'
import { phoneLinks } from '../../adapters/mqtt/phone-link.js'
import { errorText } from '../../core/errors.js'
import { silentLogger } from '../../core/logger.js'
import { PhoneClient, type PhoneClientOptions, parseGrant } from '../../phone/client.js'
import { PhoneConversations } from '../../phone/conversations.js'
import { type Pairing, parsePairingUri } from '../../protocol/index.js'
import type { VerifiedRequest } from '../../protocol/phone-side.js'
import type { Io } from './pair.js'
import { parsedOrUsage } from './parsed-or-usage.js'
import {
  type ConversationVerb,
  conversationVerb,
  isConversationVerb,
} from './phone-conversations.js'

export const USAGE = `usage:
  nocturn phone watch [--once]
  nocturn phone approve <id> [--grant once|session|<duration: 90s, 30m, 2h, 1d>]
  nocturn phone deny <id>
  nocturn phone conversations [--limit N]
  nocturn phone show <conversation-id>
  nocturn phone say <conversation-id|new> "<text>"
  nocturn phone follow [<conversation-id>]
  nocturn phone grants
  nocturn phone revoke <grant-id>

The pairing URI (it holds the phone's key) comes from --pairing-file FILE or NOCTURN_PHONE_PAIRING;
the broker user from --username or NOCTURN_MQTT_USERNAME, its password from --password-file FILE or
NOCTURN_MQTT_PASSWORD, a CA bundle from --ca-file FILE. Secrets are never taken from the command line.
`

/** `nocturn phone`: the reference phone client (protocol v1), for development and as a second implementation. */
export function run(args: string[]): Promise<number> {
  return phone(args, { out: process.stdout, err: process.stderr, env: process.env })
}

export async function phone(args: string[], io: Io, signal?: AbortSignal): Promise<number> {
  const parsed = parsedOrUsage('phone', () => parse(args), { err: io.err, usage: USAGE })
  if (!parsed) return 2
  const { values, positionals } = parsed
  const [verb, id] = positionals
  if (verb !== 'watch' && verb !== 'approve' && verb !== 'deny' && !isConversationVerb(verb)) {
    io.err.write(USAGE)
    return 2
  }
  let opts: PhoneClientOptions
  try {
    opts = clientOptions(values, io.env)
  } catch (err) {
    io.err.write(`nocturn phone: ${errorText(err)}\n`)
    return 2
  }
  if (isConversationVerb(verb)) {
    const limit = values.limit === undefined ? undefined : Number(values.limit)
    return conversations(opts, verb, positionals.slice(1), io, { limit, signal })
  }
  const client = new PhoneClient(opts)
  try {
    await withTimeout(client.start(), 10_000, unreachable(opts))
    if (verb === 'watch') return await watch(client, io, values.once === true, signal)
    if (!id) {
      io.err.write(USAGE)
      return 2
    }
    let request: VerifiedRequest
    try {
      request = await client.waitFor(id, 3000)
    } catch {
      io.err.write(
        `nocturn phone: no verified request ${id} (unknown, already ended, or not signed for this phone)\n`,
      )
      return 1
    }
    const grant = verb === 'approve' ? parseGrant(values.grant ?? 'once', Date.now()) : 'once'
    const outcome = client.waitOutcome(id, 10_000)
    await client.decide(id, verb, grant)
    const o = await outcome
    io.out.write(`${id}: ${o.state}${o.by ? ` by ${o.by}` : ''} — ${request.action}\n`)
    const wanted = verb === 'approve' ? 'approved' : 'denied'
    return o.state === wanted && o.by === opts.pairing.phone ? 0 : 1
  } catch (err) {
    io.err.write(`nocturn phone: ${errorText(err)}\n`)
    return 1
  } finally {
    await client.close()
  }
}

/** A pending request as `watch` prints it: its line, then what was said (docs/protocol.md). */
function show(r: VerifiedRequest): string {
  const asked = `by ${r.channel}${r.askedBy ? ` from ${r.askedBy}` : ''}`
  const line = `pending  ${r.id}  ${r.action}  (${r.tool}${r.critical ? ', critical' : ''}, ${asked}, until ${new Date(r.expiresAt).toISOString()})\n`
  if (r.said === undefined) return line
  const who = r.channel === 'voice' ? 'said in the room' : `typed on ${r.askedBy ?? 'a phone'}`
  return `${line}         ${who}: ${JSON.stringify(r.said)}\n`
}

async function watch(
  client: PhoneClient,
  io: Io,
  once: boolean,
  signal?: AbortSignal,
): Promise<number> {
  // Retained requests arrive right after subscribing; a moment's wait lets --once list them.
  await new Promise((r) => setTimeout(r, 300))
  for (const r of client.pending()) io.out.write(show(r))
  if (once) return 0
  client.on((e) => {
    if (e.kind === 'pending') io.out.write(show(e.request))
    else if (e.kind === 'gone') io.out.write(`gone     ${e.id}\n`)
    else if (e.kind === 'cleared')
      io.out.write(`cleared  ${e.id}  (unsigned: still shown until a verified outcome)\n`)
    else if (e.kind === 'outcome') {
      const o = e.outcome
      const grant =
        o.grant === undefined
          ? ''
          : `, remembered: ${typeof o.grant === 'string' ? o.grant : `until ${new Date(o.grant.until).toISOString()}`}`
      io.out.write(`outcome  ${o.id}  ${o.state}${o.by ? ` by ${o.by}` : ''}${grant}\n`)
    } else if (e.kind === 'yes-refused')
      io.out.write(`not taken  ${e.id}  (${e.reason}: ${e.message}; still pending)\n`)
    else io.out.write(`refused  ${e.id}  (${e.reason}: not shown, cannot be answered)\n`)
  })
  // The connection reconnects by itself when the broker comes back; its timer does not hold the
  // process, so this one does: `watch` ends only on a signal (or the caller's abort).
  const keepAlive = setInterval(() => {}, 60_000)
  await new Promise<void>((resolve) => {
    const stop = () => resolve()
    signal?.addEventListener('abort', stop, { once: true })
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
  clearInterval(keepAlive)
  return 0
}

async function conversations(
  opts: PhoneClientOptions,
  verb: ConversationVerb,
  rest: string[],
  io: Io,
  options: { limit: number | undefined; signal: AbortSignal | undefined },
): Promise<number> {
  const client = new PhoneConversations(opts)
  try {
    await withTimeout(client.start(), 10_000, unreachable(opts))
    return await conversationVerb(client, verb, rest, io, {
      ...(options.limit !== undefined && { limit: options.limit }),
      ...(options.signal !== undefined && { signal: options.signal }),
    })
  } catch (err) {
    io.err.write(`nocturn phone: ${errorText(err)}\n`)
    return 1
  } finally {
    await client.close()
  }
}

function clientOptions(
  values: ReturnType<typeof parse>['values'],
  env: NodeJS.ProcessEnv,
): PhoneClientOptions {
  const uri = values['pairing-file']
    ? readFileSync(values['pairing-file'], 'utf8')
    : env.NOCTURN_PHONE_PAIRING
  if (!uri) throw new Error('no pairing: give --pairing-file FILE or set NOCTURN_PHONE_PAIRING')
  const pairing: Pairing = parsePairingUri(uri)
  const username = values.username ?? env.NOCTURN_MQTT_USERNAME
  const password = values['password-file']
    ? readFileSync(values['password-file'], 'utf8').trim()
    : env.NOCTURN_MQTT_PASSWORD
  return {
    pairing,
    // The phone is its own program: its reconnects run on the real clock.
    link: phoneLinks(realClock()),
    logger: silentLogger,
    ...(username !== undefined && { username }),
    ...(password !== undefined && { password }),
    ...(values['ca-file'] !== undefined && { ca: readFileSync(values['ca-file']) }),
  }
}

/** The broker by host and port only: whatever else a pairing's URL holds is not repeated. */
function unreachable(opts: PhoneClientOptions): string {
  const u = new URL(opts.pairing.broker)
  return `cannot reach the broker at ${u.protocol}//${u.host} within 10 s: is it running, and is this machine on its network?`
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(what)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      grant: { type: 'string' },
      limit: { type: 'string' },
      once: { type: 'boolean' },
      'pairing-file': { type: 'string' },
      username: { type: 'string' },
      'password-file': { type: 'string' },
      'ca-file': { type: 'string' },
    },
  })
}
