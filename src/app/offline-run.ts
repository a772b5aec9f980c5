import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { EmbeddedBroker } from '../adapters/aedes/broker.js'
import { MqttConnection } from '../adapters/mqtt/connection.js'
import type { Logger } from '../core/logger.js'
import { PhoneClient } from '../phone/client.js'
import { DEFAULT_PREFIX } from '../protocol/index.js'
import { FakeLiveServer, phrase, type Script } from '../testing/fake-live-server/index.js'
import type { SessionSummary } from '../voice/voice-session.js'
import { type Appliance, startAppliance } from './appliance.js'
import { parseConfig } from './config/load.js'
import { PhoneKeyStore } from './phone-keys.js'

export interface OfflineRunOptions {
  readonly out: NodeJS.WritableStream
  readonly logger: Logger
  /** The project root, where fixtures/ lives. */
  readonly root: string
  /** Give up (exit 1) if the run has not finished by then. */
  readonly timeoutMs?: number
}

const MODEL = 'gemini-2.5-flash-native-audio-preview-12-2025'
const DEVICE = 'kitchen'

/**
 * The offline run of the whole appliance (DESIGN §7): no hardware, no key, no network. A WAV file
 * speaks to the microphone, the local detector opens a session, the real Gemini adapter talks to
 * the local fake Live service, a critical home action asks a simulated phone over the embedded
 * broker, the speaker plays into a WAV file — then the spoken session is read back as a chat and
 * continued by typing. Prints a timeline; resolves with the exit code.
 */
export async function runOffline(o: OfflineRunOptions): Promise<number> {
  const t0 = Date.now()
  const say = (who: string, text: string) =>
    o.out.write(
      `${`+${((Date.now() - t0) / 1000).toFixed(2)}s`.padStart(8)}  ${who.padEnd(9)} ${text}\n`,
    )
  const work = mkdtempSync(join(tmpdir(), 'nocturn-offline-'))
  const stack: (() => Promise<void> | void)[] = [
    () => rmSync(work, { recursive: true, force: true }),
  ]
  const unwind = async () => {
    for (const fn of stack.reverse()) await Promise.resolve(fn()).catch(() => {})
  }
  try {
    const broker = new EmbeddedBroker({ port: 0, prefix: DEFAULT_PREFIX, logger: o.logger })
    await broker.start()
    stack.push(() => broker.stop())

    // Anna pairs her phone: a key of its own, as `nocturn pair anna "Anna's phone"` would make.
    const phones = new PhoneKeyStore(join(work, 'phones'))
    const anna = phones.add('anna', "Anna's phone")

    const server = await FakeLiveServer.start({
      logger: o.logger,
      scripts: [conversationScript()],
      generate: [
        {
          text: 'You are welcome. Anna approved it from her phone, and the door was unlocked once.',
        },
      ],
    })
    stack.push(() => server.close())

    // The front door's lock, on the household broker (zigbee2mqtt would sit here).
    const lock = new MqttConnection({
      url: broker.url,
      clientId: 'front-door-lock',
      logger: o.logger,
    })
    lock.onMessage((topic, payload) => say('[lock]', `${topic} ← ${payload.toString()}`))
    lock.start()
    await lock.ready()
    await lock.subscribe(['home/front-door/set'])
    stack.push(() => lock.close())

    const phone = new PhoneClient({
      pairing: {
        broker: broker.url,
        device: DEVICE,
        prefix: DEFAULT_PREFIX,
        phone: 'anna',
        key: anna.key,
      },
      logger: o.logger,
    })
    phone.on((e) => {
      if (e.kind === 'pending') {
        say('[phone]', `Anna's phone shows: "${e.request.action}" — she taps Approve`)
        // A person takes a moment to read it; the conversation carries on meanwhile.
        setTimeout(() => void phone.decide(e.request.id, 'approve', 'once'), 1500)
      } else if (e.kind === 'outcome') {
        say('[phone]', `outcome: ${e.outcome.state}`)
      } else if (e.kind === 'refused') {
        say('[phone]', `refused to show ${e.id}: ${e.reason}`)
      }
    })
    await phone.start()
    stack.push(() => phone.close())

    const loaded = parseConfig(
      JSON.stringify({
        provider: { model: MODEL, textModel: 'gemini-3.5-flash', baseUrl: server.baseUrl },
        audio: {
          backend: 'wav',
          inputWav: resolve(o.root, 'fixtures/offline/unlock-request.wav'),
          outputWav: join(work, 'speaker.wav'),
        },
        mqtt: { url: broker.url, deviceId: DEVICE },
        phonesDir: join(work, 'phones'),
        store: { path: join(work, 'nocturn.db') },
        session: { idleTimeoutSeconds: 2, approvalTimeoutSeconds: 30 },
        homeActions: [
          {
            name: 'unlock_front_door',
            description: 'Unlocks the front door.',
            says: 'unlock the front door',
            topic: 'home/front-door/set',
            payload: { state: 'UNLOCK' },
            critical: true,
          },
        ],
      }),
      'offline config',
      { GEMINI_API_KEY: 'offline-run-key' },
    )

    let ended!: (s: SessionSummary) => void
    const sessionEnded = new Promise<SessionSummary>((r) => {
      ended = r
    })
    let lastState = ''
    const appliance: Appliance = await startAppliance({
      loaded,
      logger: o.logger,
      onSessionEnd: (s) => ended(s),
      onState: (s) => {
        if (s !== lastState) say('[led]', s)
        lastState = s
      },
    })
    stack.push(() => appliance.close())
    appliance.feed.subscribe((m) => {
      if (m.role === 'user') say(m.channel === 'voice' ? '[person]' : '[typed]', m.text)
      else if (m.role === 'assistant') {
        if (m.text) say('[nocturn]', m.text)
        for (const c of m.toolCalls) say('[tool]', `${c.name} called`)
      } else say('[tool]', `${m.toolName}: ${m.outcome.ok ? 'done' : m.outcome.error}`)
    })
    say('[mic]', 'the room is quiet; the microphone plays fixtures/offline/unlock-request.wav')

    const summary = await withTimeout(sessionEnded, o.timeoutMs ?? 60_000, 'the spoken session')
    say(
      '[session]',
      `closed (${summary.reason}): ${summary.turns} turns, ${summary.calls.answered} call answered`,
    )

    o.out.write('\n— the spoken session, read back as a chat —\n')
    const { messages } = appliance.conversations.show({ id: summary.conversationId, limit: 500 })
    for (const m of messages) {
      const body =
        m.role === 'tool'
          ? `${m.toolName} → ${m.outcome.ok ? 'done' : m.outcome.error}`
          : m.role === 'assistant' && m.text === ''
            ? `(calls ${m.toolCalls.map((c) => c.name).join(', ')})`
            : m.text
      o.out.write(`  ${m.channel.padEnd(5)} ${m.role.padEnd(9)} ${body}\n`)
    }
    o.out.write("\n— continued by typing on Anna's phone —\n")
    await appliance.conversations.say({
      conversationId: summary.conversationId,
      text: 'Thanks! Who let the plumber in?',
      phone: 'anna',
    })
    const stored = appliance.store.messages(summary.conversationId).length
    o.out.write(`\n${stored} messages stored in one conversation; the offline run is done.\n`)
    return 0
  } catch (err) {
    o.out.write(`offline run failed: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  } finally {
    await unwind()
  }
}

/** What the fake Live service plays: it hears the request, calls the lock, waits, confirms. */
function conversationScript(): Script {
  const isFinal = (f: { key: string; frame: Record<string, unknown> }) =>
    f.key === 'toolResponse' && JSON.stringify(f.frame).includes('"willContinue":false')
  return {
    steps: [
      { waitFor: 'realtimeInput', timeoutMs: 20_000 },
      { delayMs: 1200 },
      {
        send: {
          serverContent: {
            inputTranscription: { text: 'Please unlock the front door for the plumber.' },
          },
        },
      },
      {
        send: {
          toolCall: { functionCalls: [{ id: 'call-1', name: 'unlock_front_door', args: {} }] },
        },
      },
      { waitFor: 'toolResponse', timeoutMs: 10_000 },
      { speak: phrase('waiting').pcm, transcript: "I've asked Anna's phone; one moment." },
      { send: { serverContent: { turnComplete: true } } },
      { waitFor: isFinal, timeoutMs: 30_000 },
      { speak: phrase('unlocked').pcm, transcript: 'The front door is unlocked.' },
      { send: { serverContent: { turnComplete: true } } },
    ],
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`${what} did not finish within ${ms / 1000} s`)), ms)
    p.then(
      (v) => {
        clearTimeout(t)
        res(v)
      },
      (e: unknown) => {
        clearTimeout(t)
        rej(e)
      },
    )
  })
}
