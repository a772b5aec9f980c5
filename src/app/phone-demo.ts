import { writeFileSync } from 'node:fs'
import { type AddressInfo, createServer } from 'node:net'
import { join } from 'node:path'
import { EmbeddedBroker } from '../adapters/aedes/broker.js'
import { wavHeader } from '../audio/wav.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { DEFAULT_PREFIX, pairingUri } from '../protocol/index.js'
import { FakeLiveServer, type GenerateAnswer } from '../testing/fake-live-server/index.js'
import { startAppliance } from './appliance.js'
import type { Appliance } from './compose/appliance-contract.js'
import { parseConfig } from './config/load.js'
import { HOUSEHOLD_ACTIONS } from './household-scene.js'
import { emptyOfLastRun } from './offline/run-context.js'
import { pairingLink } from './phone-app.js'
import { PhoneKeyStore } from './phone-keys.js'

export interface PhoneDemoOptions {
  readonly out: NodeJS.WritableStream
  readonly logger: Logger
  /** Where the store and the phone keys go (reset at the start). */
  readonly workDir: string
  /** The app's port (8080, or a free one if taken); the broker's WebSocket port (9001, likewise). */
  readonly appPort?: number
  readonly brokerWsPort?: number
  /** The built app's folder (dist/web by default). */
  readonly appRoot?: string
  /** Ends the wait early (Ctrl-C in the terminal; tests). */
  readonly signal?: AbortSignal
  /** Called once the link is printed (tests open it). */
  readonly onLink?: (link: string) => void
}

const MODEL = 'gemini-2.5-flash-native-audio-preview-12-2025'
const DEVICE = 'kitchen'

/** Something Ben types on his phone, and the home action the model calls for it. */
const ROUNDS = [
  {
    text: 'Please let the plumber in.',
    tool: 'unlock_front_door',
    done: 'The front door is unlocked for the plumber.',
    denied: 'The front door stays locked: you said no.',
    refused: 'The front door stays locked: nobody said yes.',
  },
  {
    text: 'Switch on the porch light, please.',
    tool: 'switch_on_porch_light',
    done: 'The porch light is on.',
    denied: 'The porch light stays off: you said no.',
    refused: 'The porch light stays off: nobody said yes.',
  },
] as const

/** Not critical, so a yes may be remembered — and then revoked under Grants. */
const PORCH_LIGHT = {
  name: 'switch_on_porch_light',
  description: 'Switches on the porch light.',
  says: 'switch on the porch light',
  topic: 'home/porch-light/set',
  payload: { state: 'ON' },
  policy: { voice: 'ask', text: 'ask' },
} as const

/**
 * `nocturn demo --phone`: the offline appliance of `npm start`, with the phone app served and a
 * pairing link for a browser on this machine. It runs until Ctrl-C (`signal`), with something to do
 * on every screen: Ben (a simulated phone) types a request, the model calls a home action, the
 * request waits until someone taps Approve or Deny in the browser, and after each ending Ben asks
 * again (the front door, which asks every time; the porch light, whose yes can be remembered and
 * then revoked under Grants); a spoken conversation waits under Chats to be read and continued.
 * Loopback only: the broker's WebSocket and the app listen on 127.0.0.1.
 */
export async function runPhoneDemo(options: PhoneDemoOptions): Promise<number> {
  const stack: (() => Promise<void> | void)[] = []
  const unwind = async () => {
    for (const fn of stack.reverse()) await Promise.resolve(fn()).catch(() => {})
  }
  const say = (text: string) => options.out.write(`${text}\n`)
  try {
    emptyOfLastRun(options.workDir)

    const broker = new EmbeddedBroker({
      port: 0,
      wsPort: await portOr(options.brokerWsPort ?? 9001),
      prefix: DEFAULT_PREFIX,
      logger: options.logger,
    })
    await broker.start()
    stack.push(() => broker.stop())

    const phones = new PhoneKeyStore(join(options.workDir, 'phones'))
    // The browser is Anna's phone: the app then says "You approved this", and names Ben's phone.
    const browser = phones.add('anna', "Anna's phone")
    phones.add('ben', "Ben's phone")

    // Every typed turn (Ben's, and whatever is typed in the browser's Chats) is answered from
    // what was said: a round's request calls its home action, anything else gets a plain reply.
    const server = await FakeLiveServer.start({
      logger: options.logger,
      scripts: [],
      generate: Array.from({ length: 10_000 }, () => demoModel),
    })
    stack.push(() => server.close())

    // A quiet room: one second of silence, looped, so no spoken session starts.
    const silence = join(options.workDir, 'silence.wav')
    const pcm = Buffer.alloc(32_000)
    writeFileSync(silence, Buffer.concat([wavHeader(16_000, pcm.length), pcm]))

    const appPort = await portOr(options.appPort ?? 8080)
    const loaded = parseConfig(
      JSON.stringify({
        provider: { model: MODEL, textModel: 'gemini-3.5-flash', baseUrl: server.baseUrl },
        audio: {
          backend: 'wav',
          inputWav: silence,
          outputWav: join(options.workDir, 'speaker.wav'),
        },
        mqtt: { url: broker.url, deviceId: DEVICE },
        phoneApp: {
          port: appPort,
          host: '127.0.0.1',
          // A name, not 127.0.0.1: WebAuthn refuses an IP address, and the owner's fingerprint
          // is offered only where it can work (the browser still reaches it on loopback).
          publicHost: 'localhost',
          ...(broker.wsUrl && { brokerWsUrl: broker.wsUrl }),
          ...(options.appRoot && { root: options.appRoot }),
        },
        phonesDir: join(options.workDir, 'phones'),
        store: { path: join(options.workDir, 'nocturn.db') },
        // A person at a desk takes their time: the request waits up to an hour.
        session: { approvalTimeoutSeconds: 3600 },
        homeActions: [...HOUSEHOLD_ACTIONS, PORCH_LIGHT],
      }),
      'phone demo config',
      { GEMINI_API_KEY: 'offline-run-key' },
    )
    const appliance: Appliance = await startAppliance({
      loaded,
      logger: options.logger,
      wavLoop: true,
    })
    stack.push(() => appliance.close())
    if (!appliance.phoneApp) throw new Error(`the phone app could not be served on port ${appPort}`)

    const uri = pairingUri({
      broker: broker.url,
      device: DEVICE,
      prefix: DEFAULT_PREFIX,
      phone: 'anna',
      key: browser.key,
    })
    // The link by the name the owner's fingerprint is registered for (publicHost above).
    const link = pairingLink(appliance.phoneApp.url.replace('//127.0.0.1:', '//localhost:'), uri)
    say('The speaker "kitchen" is running offline, with its phone app served on this machine.')
    say('Open this link in a desktop browser (it pairs the browser as a phone of this speaker):\n')
    say(`  ${link}\n`)
    say('Any broker password is accepted here (the demo broker is open, on loopback only).')
    say('It keeps running, asking again after every answer, until Ctrl-C.')
    seedConversation(appliance)
    options.onLink?.(link)

    const aborted = new Promise<'stopped'>((resolve) => {
      if (options.signal?.aborted) resolve('stopped')
      options.signal?.addEventListener('abort', () => resolve('stopped'), { once: true })
    })
    // Ben's typed requests are one conversation, as a person typing on one phone keeps one chat.
    let conversationId = 'new'
    for (let round = 0; ; round++) {
      const r = ROUNDS[round % ROUNDS.length] as (typeof ROUNDS)[number]
      say(`\nBen types on his phone: "${r.text}"`)
      const turn = appliance.conversations.say({
        conversationId,
        text: r.text,
        phone: 'ben',
        onPending: (p) =>
          say(`Waiting for a yes in the browser: "${p.action}" (tap Approve or Deny there)…`),
      })
      const result = await Promise.race([turn, aborted])
      if (result === 'stopped') {
        say('Stopped.')
        return 0
      }
      conversationId = result.conversationId
      say(`Nocturn: ${result.text}`)
      // A moment to read the finished card before the next request arrives.
      const paused = await Promise.race([sleep(1500), aborted])
      if (paused === 'stopped') {
        say('Stopped.')
        return 0
      }
    }
  } catch (err) {
    options.out.write(`phone demo failed: ${errorText(err)}\n`)
    return 1
  } finally {
    await unwind()
  }
}

/** The demo's model: calls the home action a round asks for, says how it went, else replies. */
function demoModel(body: Record<string, unknown>): GenerateAnswer {
  const contents = (body.contents ?? []) as Array<{
    role: string
    parts: Array<Record<string, unknown>>
  }>
  const last = contents.at(-1)
  const answered = last?.parts.find((p) => p.functionResponse)
  if (answered) {
    const fr = answered.functionResponse as { name?: string; response?: unknown }
    const r = ROUNDS.find((x) => x.tool === fr.name)
    const response = JSON.stringify(fr.response ?? {})
    // A person's explicit no is not "nobody said yes": only a request that ran out is.
    const denied = response.includes('NOC_ERR_DENIED_BY_HUMAN')
    const refused = /NOC_ERR|"error"/.test(response)
    return { text: r ? (denied ? r.denied : refused ? r.refused : r.done) : 'Done.' }
  }
  const text = String(last?.parts.find((p) => typeof p.text === 'string')?.text ?? '')
  const r = ROUNDS.find((x) => x.text === text)
  if (r)
    return { functionCalls: [{ id: `demo-${Date.now().toString(36)}`, name: r.tool, args: {} }] }
  return {
    text: `You said: "${text.slice(0, 200)}". This is the offline demo, so that is all I can say.`,
  }
}

/** A spoken conversation from earlier today, to read and continue under Chats. */
function seedConversation(appliance: Appliance): void {
  const at = Date.now() - 20 * 60_000
  const c = appliance.feed.createConversation({ channel: 'voice', at })
  appliance.feed.append(c.id, {
    role: 'user',
    text: 'What time does the plumber come?',
    channel: 'voice',
    at: at + 1000,
  })
  appliance.feed.append(c.id, {
    role: 'assistant',
    text: 'The plumber said half past ten. I will ask your phone before I open the door.',
    toolCalls: [],
    channel: 'voice',
    at: at + 3000,
  })
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/**
 * `port` if it can be bound on loopback now, else a free one — a number, not 0, because the app's
 * address (and so the origin the owner's fingerprint is registered for) names it.
 */
function portOr(port: number): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer()
    s.once('error', () => (port === 0 ? resolve(0) : resolve(portOr(0))))
    s.listen(port, '127.0.0.1', () => {
      const got = (s.address() as AddressInfo).port
      s.close(() => resolve(got))
    })
  })
}
