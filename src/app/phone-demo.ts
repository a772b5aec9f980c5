import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { EmbeddedBroker } from '../adapters/aedes/broker.js'
import { wavHeader } from '../audio/wav.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { DEFAULT_PREFIX, pairingUri } from '../protocol/index.js'
import { FakeLiveServer } from '../testing/fake-live-server/index.js'
import { type Appliance, startAppliance } from './appliance.js'
import { parseConfig } from './config/load.js'
import { HOUSEHOLD_ACTIONS } from './household-scene.js'
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

/**
 * `nocturn demo --phone`: the offline appliance of `npm start`, with the phone app served and a
 * pairing link for a browser on this machine. Ben (a simulated phone) types "let the plumber in";
 * the model calls the critical `unlock_front_door`; the request waits, pending, until someone taps
 * Approve or Deny in the browser — the simulated approver of `npm start` steps aside. Loopback
 * only: the broker's WebSocket and the app listen on 127.0.0.1.
 */
export async function runPhoneDemo(options: PhoneDemoOptions): Promise<number> {
  const stack: (() => Promise<void> | void)[] = []
  const unwind = async () => {
    for (const fn of stack.reverse()) await Promise.resolve(fn()).catch(() => {})
  }
  const say = (text: string) => options.out.write(`${text}\n`)
  try {
    rmSync(join(options.workDir, 'nocturn.db'), { force: true })
    rmSync(join(options.workDir, 'phones'), { recursive: true, force: true })
    mkdirSync(options.workDir, { recursive: true })

    const broker = new EmbeddedBroker({
      port: 0,
      wsPort: await portOr(options.brokerWsPort ?? 9001),
      prefix: DEFAULT_PREFIX,
      logger: options.logger,
    })
    await broker.start()
    stack.push(() => broker.stop())

    const phones = new PhoneKeyStore(join(options.workDir, 'phones'))
    const browser = phones.add('browser', 'This browser')
    phones.add('ben', "Ben's phone")

    // The typed turn: the model calls the lock, then says what came of it.
    const server = await FakeLiveServer.start({
      logger: options.logger,
      scripts: [],
      generate: [
        { functionCalls: [{ id: 'door-1', name: 'unlock_front_door', args: {} }] },
        (body) =>
          /NOC_ERR_DENIED|"error"/.test(JSON.stringify(body))
            ? { text: 'The front door stays locked: nobody said yes.' }
            : { text: 'The front door is unlocked for the plumber.' },
      ],
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
          publicHost: '127.0.0.1',
          ...(broker.wsUrl && { brokerWsUrl: broker.wsUrl }),
          ...(options.appRoot && { root: options.appRoot }),
        },
        phonesDir: join(options.workDir, 'phones'),
        store: { path: join(options.workDir, 'nocturn.db') },
        // A person at a desk takes their time: the request waits up to an hour.
        session: { approvalTimeoutSeconds: 3600 },
        homeActions: HOUSEHOLD_ACTIONS,
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
      phone: 'browser',
      key: browser.key,
    })
    const link = pairingLink(appliance.phoneApp.url, uri)
    say('The speaker "kitchen" is running offline, with its phone app served on this machine.')
    say('Open this link in a desktop browser (it pairs the browser as a phone of this speaker):\n')
    say(`  ${link}\n`)
    say('Any broker password is accepted here (the demo broker is open, on loopback only).')
    options.onLink?.(link)

    say('\nBen types on his phone: "Please let the plumber in."')
    const turn = appliance.conversations.say({
      conversationId: 'new',
      text: 'Please let the plumber in.',
      phone: 'ben',
      onPending: (p) =>
        say(`Waiting for a yes in the browser: "${p.action}" (tap Approve or Deny there)…`),
    })
    const aborted = new Promise<'stopped'>((resolve) => {
      if (options.signal?.aborted) resolve('stopped')
      options.signal?.addEventListener('abort', () => resolve('stopped'), { once: true })
    })
    const result = await Promise.race([turn, aborted])
    if (result === 'stopped') {
      say('Stopped before anyone answered.')
      return 0
    }
    say(`Nocturn: ${result.text}`)
    return 0
  } catch (err) {
    options.out.write(`phone demo failed: ${errorText(err)}\n`)
    return 1
  } finally {
    await unwind()
  }
}

/** `port` if it can be bound on loopback now, else 0 (a free one is picked). */
function portOr(port: number): Promise<number> {
  if (port === 0) return Promise.resolve(0)
  return new Promise((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(0))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(port)))
  })
}
