import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { EmbeddedBroker } from '../adapters/aedes/broker.js'
import { realClock } from '../adapters/clock/real-clock.js'
import { MqttConnection } from '../adapters/mqtt/connection.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { PhoneClient } from '../phone/client.js'
import { DEFAULT_PREFIX } from '../protocol/index.js'
import {
  FakeLiveServer,
  type ReceivedFrame,
  type Script,
} from '../testing/fake-live-server/index.js'
import type { SessionSummary } from '../voice/voice-session.js'
import { type Appliance, startAppliance } from './appliance.js'
import { parseConfig } from './config/load.js'
import { HOUSEHOLD_ACTIONS, householdScene } from './household-scene.js'
import { PhoneKeyStore } from './phone-keys.js'

export interface OfflineRunOptions {
  readonly out: NodeJS.WritableStream
  readonly logger: Logger
  /** The project root, where fixtures/ lives. */
  readonly root: string
  /** Where the store and the speaker WAV go; kept afterwards. A temporary folder (removed) if unset. */
  readonly workDir?: string
  /**
   * Give up (exit 1) if the run has not finished by then: a guard against a hang, not a guess at
   * how fast the machine is — the scene says when it is over. Default 10 minutes.
   */
  readonly timeoutMs?: number
  /** How the closing hint names the CLI (`nocturn`, `node dist/app/cli.js`…). Default `nocturn`. */
  readonly cli?: string
  /** The model side's script; the household scene unless a test swaps in another. */
  readonly scene?: Script
}

const MODEL = 'gemini-2.5-flash-native-audio-preview-12-2025'
const DEVICE = 'kitchen'

/**
 * The offline run of the whole appliance (docs/design.md §7): no hardware, key, network. A WAV file
 * speaks to the microphone; the local detector opens a session; the real Gemini adapter talks to
 * the local fake Live service, which plays a household scene: a critical action approved on a
 * simulated phone over the embedded broker while the conversation carries on, a second request the
 * model withdraws, a barge-in that drops the speaker, the mute button. Then the spoken session is
 * read back as a chat and continued by typing. Prints a timeline; resolves with the exit code.
 *
 * The scene, not a timer, says when the spoken session is over: the session has no idle timeout
 * worth the name here, and ends when the model side has played its last step and the button has
 * been pressed. The run then checks what really happened (the broker, the phone, the store) against
 * the script and exits 1, naming each difference, when the scene did not play as written — so a
 * slow machine gives a slow run, never a silent or false one.
 */
export async function runOffline(options: OfflineRunOptions): Promise<number> {
  const t0 = Date.now()
  const say = (who: string, text: string) =>
    options.out.write(
      `${`+${((Date.now() - t0) / 1000).toFixed(2)}s`.padStart(8)}  ${who.padEnd(9)} ${text}\n`,
    )
  const work = options.workDir ?? mkdtempSync(join(tmpdir(), 'nocturn-offline-'))
  rmSync(join(work, 'nocturn.db'), { force: true })
  rmSync(join(work, 'phones'), { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  const stack: (() => Promise<void> | void)[] = []
  if (!options.workDir) stack.push(() => rmSync(work, { recursive: true, force: true }))
  const unwind = async () => {
    for (const fn of stack.reverse()) await Promise.resolve(fn()).catch(() => {})
  }
  // What really happened, filled in by observers; checked against the script at the end.
  const seen = {
    approvedOnPhone: false,
    doorUnlocked: false,
    garageMoved: false,
    drops: 0,
    mutePressed: false,
    unmutePressed: false,
    streamEnd: false,
  }
  const timers: NodeJS.Timeout[] = []
  const later = (ms: number, fn: () => void) => timers.push(setTimeout(fn, ms))
  stack.push(() => timers.forEach(clearTimeout))
  try {
    const broker = new EmbeddedBroker({ port: 0, prefix: DEFAULT_PREFIX, logger: options.logger })
    await broker.start()
    stack.push(() => broker.stop())

    // Anna pairs her phone: a key of its own, as `nocturn pair anna "Anna's phone"` would make.
    const anna = new PhoneKeyStore(join(work, 'phones')).add('anna', "Anna's phone")

    const server = await FakeLiveServer.start({
      logger: options.logger,
      scripts: [options.scene ?? householdScene()],
      // The typed reply states only what the history it is given and the house really show.
      generate: [(body) => ({ text: typedReply(body, seen) })],
    })
    stack.push(() => server.close())
    stack.push(
      watchModelSide(server, say, () => {
        seen.streamEnd = true
      }),
    )

    // The household's devices on the broker (zigbee2mqtt would sit here).
    const devices = new MqttConnection({
      url: broker.url,
      clientId: 'household',
      logger: options.logger,
      clock: realClock(),
    })
    devices.onMessage((topic, payload) => {
      if (topic === 'home/front-door/set') seen.doorUnlocked = true
      if (topic === 'home/garage/set') seen.garageMoved = true
      say('[house]', `${topic} ← ${payload.toString()}`)
    })
    devices.start()
    await devices.ready()
    await devices.subscribe(['home/#'])
    stack.push(() => devices.close())

    const phone = new PhoneClient({
      pairing: {
        broker: broker.url,
        device: DEVICE,
        prefix: DEFAULT_PREFIX,
        phone: 'anna',
        key: anna.key,
      },
      logger: options.logger,
    })
    phone.on((e) => {
      if (e.kind === 'pending') {
        say('[phone]', `Anna's phone shows: "${e.request.action}"`)
        // She approves the door she was asked about; the garage she leaves (it is withdrawn first),
        // so no machine, however slow, can have her approve it before the withdrawal arrives.
        if (e.request.action !== 'unlock the front door') return
        // A person takes a moment to read it; the conversation carries on meanwhile.
        later(1500, () => {
          if (!phone.pending().some((r) => r.id === e.request.id)) return
          say('[phone]', `Anna taps Approve on "${e.request.action}"`)
          void phone
            .decide(e.request.id, 'approve', 'once')
            .catch((err: unknown) => say('[phone]', `the approval was not sent: ${errorText(err)}`))
        })
      } else if (e.kind === 'outcome') {
        if (e.outcome.state === 'approved') seen.approvedOnPhone = true
        say('[phone]', `request ${e.outcome.state}`)
      }
    })
    await phone.start()
    stack.push(() => phone.close())

    const loaded = parseConfig(
      JSON.stringify({
        provider: { model: MODEL, textModel: 'gemini-3.5-flash', baseUrl: server.baseUrl },
        audio: {
          backend: 'wav',
          inputWav: resolve(options.root, 'fixtures/offline/unlock-request.wav'),
          outputWav: join(work, 'speaker.wav'),
        },
        mqtt: { url: broker.url, deviceId: DEVICE },
        phoneApp: { enabled: false },
        phonesDir: join(work, 'phones'),
        store: { path: join(work, 'nocturn.db') },
        // Idle never ends this session (the scene does); the approval waits for a slow board too.
        session: { idleTimeoutSeconds: 3600, approvalTimeoutSeconds: 600 },
        homeActions: HOUSEHOLD_ACTIONS,
      }),
      'offline config',
      { GEMINI_API_KEY: 'offline-run-key' },
    )

    let ended!: (s: SessionSummary) => void
    const sessionEnded = new Promise<SessionSummary>((r) => {
      ended = r
    })
    let unmuted!: () => void
    const buttonDone = new Promise<void>((r) => {
      unmuted = r
    })
    let lastState = ''
    let appliance!: Appliance
    appliance = await startAppliance({
      loaded,
      logger: options.logger,
      onSessionEnd: (s) => ended(s),
      onState: (s) => {
        if (s !== lastState) say('[led]', s)
        lastState = s
      },
      onDrop: (r) => {
        seen.drops++
        if (seen.drops > 1) return
        say(
          '[speaker]',
          `dropped at once: ${Math.round(r.discardedMs)} ms of stale reply discarded`,
        )
        // A moment later someone presses the button: mute, then unmute.
        later(600, () => {
          say('[button]', 'short press: mute')
          appliance.panel.setMuted(true)
          seen.mutePressed = true
          later(900, () => {
            say('[button]', 'short press: unmute')
            appliance.panel.setMuted(false)
            seen.unmutePressed = true
            unmuted()
          })
        })
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

    // The spoken session is over when the scene is played and the button pressed — or earlier, if
    // it ended by itself (an error), which the checks below then report.
    const budget = options.timeoutMs ?? 900_000
    let sessionOver = false
    void sessionEnded.then(() => {
      sessionOver = true
    })
    const sceneOver = server
      .until(() => server.connections[0]?.finished || sessionOver, budget)
      .then(() => (seen.mutePressed && !sessionOver ? buttonDone : undefined))
      .then(() => appliance.driver.stop())
    const summary = await withTimeout(
      Promise.race([sessionEnded, sceneOver.then(() => sessionEnded)]),
      budget,
      'the spoken session',
    )
    say(
      '[session]',
      `closed (${summary.reason}): ${summary.turns} turns, ${summary.calls.answered} answered, ${summary.calls.withdrawn} withdrawn`,
    )

    options.out.write('\n— the spoken session, read back as a chat —\n')
    const { messages } = appliance.conversations.show({ id: summary.conversationId, limit: 500 })
    for (const m of messages) {
      const body =
        m.role === 'tool'
          ? `${m.toolName} → ${m.outcome.ok ? 'done' : m.outcome.error}`
          : m.role === 'assistant' && m.text === ''
            ? `(calls ${m.toolCalls.map((c) => c.name).join(', ')})`
            : m.text
      options.out.write(`  ${m.channel.padEnd(5)} ${m.role.padEnd(9)} ${body}\n`)
    }
    options.out.write("\n— continued by typing on Anna's phone —\n")
    await appliance.conversations.say({
      conversationId: summary.conversationId,
      text: 'Thanks! Who let the plumber in?',
      phone: 'anna',
    })
    const chat = appliance.store.messages(summary.conversationId)
    const stored = chat.length
    await appliance.close()
    const wav = join(work, 'speaker.wav')
    const heardMs = Math.round(((statSync(wav).size - 44) / 48_000) * 1000)
    const store = join(work, 'nocturn.db')
    const shown = options.workDir ? relative(process.cwd(), store) || store : store
    options.out.write(
      `\n${stored} messages in one conversation. The speaker played ${heardMs} ms into ${
        options.workDir ? relative(process.cwd(), wav) || wav : wav
      }.\n`,
    )
    const wrong = differences(seen, summary, server, chat, heardMs)
    if (wrong.length > 0) {
      options.out.write(
        `\nThe scene did not play as scripted:\n${wrong.map((w) => `  - ${w}\n`).join('')}`,
      )
      return 1
    }
    options.out.write(
      `Read it again: ${options.cli ?? 'nocturn'} transcripts show ${summary.conversationId} --store ${shown}\n`,
    )
    return 0
  } catch (err) {
    options.out.write(`offline run failed: ${errorText(err)}\n`)
    return 1
  } finally {
    await unwind()
  }
}

/** Prints what the model side received that matters: answers to calls, and the end of audio. */
function watchModelSide(
  server: FakeLiveServer,
  say: (who: string, text: string) => void,
  onStreamEnd: () => void,
) {
  let seen = 0
  const t = setInterval(() => {
    for (; seen < server.received.length; seen++) {
      const f = server.received[seen] as ReceivedFrame
      if (f.key === 'toolResponse') {
        const responses = (f.frame.toolResponse as { functionResponses?: unknown[] })
          ?.functionResponses as Record<string, unknown>[] | undefined
        for (const r of responses ?? []) {
          const how = r.willContinue
            ? `interim ${JSON.stringify(r.response)}`
            : `final, scheduling ${String(r.scheduling ?? 'none')}`
          say('[model←]', `${String(r.id)}: ${how}`)
        }
      } else if (
        (f.frame.realtimeInput as { audioStreamEnd?: boolean } | undefined)?.audioStreamEnd
      ) {
        onStreamEnd()
        say('[model←]', 'audioStreamEnd: the microphone is muted, no audio leaves')
      }
    }
  }, 10)
  return () => clearInterval(t)
}

type Seen = {
  approvedOnPhone: boolean
  doorUnlocked: boolean
  garageMoved: boolean
  drops: number
  mutePressed: boolean
  unmutePressed: boolean
  streamEnd: boolean
}

/** The typed reply, from the history the text model is sent and what the house saw, never canned. */
function typedReply(body: Record<string, unknown>, seen: Seen): string {
  const history = JSON.stringify(body.contents ?? [])
  const answered = (name: string) =>
    new RegExp(`"functionResponse":\\{[^}]*"name":"${name}","response":\\{"output"`).test(history)
  const door =
    answered('unlock_front_door') && seen.doorUnlocked
      ? seen.approvedOnPhone
        ? 'Anna approved the front door on her phone'
        : 'the front door was unlocked'
      : 'the front door was not unlocked'
  const garage = seen.garageMoved ? 'the garage door was opened' : 'the garage stayed shut'
  return `You are welcome. ${door}; ${garage}.`
}

/** Where what happened differs from the household scene's script; empty when it played as written. */
function differences(
  seen: Seen,
  summary: SessionSummary,
  server: FakeLiveServer,
  chat: readonly { role: string; text?: string }[],
  heardMs: number,
): string[] {
  const wrong: string[] = []
  if (!server.connections[0]?.finished)
    wrong.push('the model side did not reach the end of its scene')
  for (const e of server.errors) wrong.push(`the model side: ${e}`)
  if (summary.reason !== 'stopped') wrong.push(`the session ended by itself (${summary.reason})`)
  if (summary.calls.answered !== 1) wrong.push(`${summary.calls.answered} calls answered, not 1`)
  if (summary.calls.withdrawn !== 1) wrong.push(`${summary.calls.withdrawn} calls withdrawn, not 1`)
  if (!seen.approvedOnPhone) wrong.push("Anna's phone never saw the unlock approved")
  if (!seen.doorUnlocked) wrong.push('the front door was never told to unlock')
  if (seen.garageMoved) wrong.push('the garage was told to open')
  if (seen.drops === 0) wrong.push('the barge-in never dropped the speaker')
  if (!seen.mutePressed || !seen.unmutePressed)
    wrong.push('the mute button was not pressed and released')
  if (!seen.streamEnd) wrong.push('the model side never heard the microphone end its stream')
  if (heardMs <= 0) wrong.push('the speaker played nothing')
  const last = chat.at(-1)
  if (last?.role !== 'assistant' || !last.text) wrong.push('the typed question got no stored reply')
  return wrong
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
