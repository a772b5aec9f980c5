import { readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parseWav } from '../audio/wav.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Script } from '../testing/fake-live-server/index.js'
import type { SessionSummary } from '../voice/session-types.js'
import type { Appliance } from './compose/appliance-contract.js'
import { householdScene } from './household-scene.js'
import { startApplianceInHouse } from './offline/appliance-in-house.js'
import { type House, startHouse } from './offline/house.js'
import { geminiSide } from './offline/model-side.js'
import { openaiSide } from './offline/openai-side.js'
import { type RunContext, runContext } from './offline/run-context.js'
import { differences } from './offline/scene-checks.js'
import { playSpokenSession } from './offline/spoken-session.js'

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
  /**
   * `wake` (`npm start`): the room says a sentence without the wake phrase (nothing opens), then
   * "Hey Jarvis, please unlock…", and later "Hey Jarvis, stop" over the long answer (a barge-in
   * by the wake word). `speech` (default): any speech opens the session, as before the wake word.
   */
  readonly listen?: 'wake' | 'speech'
  /** The provider the appliance speaks to, each through its real adapter to its fake service. */
  readonly provider?: 'gemini' | 'openai'
}

/**
 * The offline run of the whole appliance (docs/design.md §7): no hardware, key, network. A WAV file
 * speaks to the microphone; the local detector opens a session; the real Gemini adapter talks to
 * the local fake Live service, which plays a household scene in a stand-in Home Assistant: the
 * front door unlocked after a yes on a simulated phone over the embedded broker while the
 * conversation carries on, a second request (the garage) the model withdraws, the kitchen light
 * switched with no phone, a barge-in that drops the speaker, the mute button. Then the spoken
 * session is read back as a chat and continued by typing. Prints a timeline; resolves with the
 * exit code.
 *
 * The scene, not a timer, says when the spoken session is over: the session has no idle timeout
 * worth the name here, and ends when the model side has played its last step and the button has
 * been pressed. The run then checks what really happened (Home Assistant's service calls and
 * states, the phone, what the model was told, the store) against the script and exits 1, naming
 * each difference, when the scene did not play as written — so a slow machine gives a slow run,
 * never a silent or false one.
 */
export async function runOffline(options: OfflineRunOptions): Promise<number> {
  const { ctx, unwind } = runContext(options.out, options.logger, options.workDir)
  try {
    const wake = options.listen === 'wake'
    const model =
      options.provider === 'openai'
        ? await openaiSide(ctx, { wake })
        : await geminiSide(ctx, options.scene ?? householdScene({ wake, home: true }))
    const house = await startHouse(ctx, model)
    const watched = await startApplianceInHouse(ctx, house, options.root, wake)
    if (wake) tellTheRoom(ctx)
    else {
      ctx.say(
        '[mic]',
        'the room is quiet; the microphone plays fixtures/offline/unlock-request.wav',
      )
    }
    const summary = await playSpokenSession(watched, house, ctx.seen, options.timeoutMs ?? 900_000)
    ctx.say(
      '[session]',
      `closed (${summary.reason}): ${summary.turns} turns; tool calls ${summary.calls.answered} answered, ${summary.calls.withdrawn} withdrawn`,
    )
    const { appliance } = watched
    readBack(ctx.out, appliance, summary)
    options.out.write("\n— continued by typing on Anna's phone —\n")
    await appliance.conversations.say({
      conversationId: summary.conversationId,
      text: 'Thanks! Who let the plumber in?',
      phone: 'anna',
    })
    const chat = appliance.store.messages(summary.conversationId)
    await appliance.close()
    return report(ctx, options, house, summary, chat, wake ? beforeWake(options.root) : undefined)
  } catch (err) {
    options.out.write(`offline run failed: ${errorText(err)}\n`)
    return 1
  } finally {
    await unwind()
  }
}

/** What fixtures/offline/wake-scene.wav says, when (scripts/make-offline-fixtures.sh). */
const WAKE_SCENE_ROOM: readonly [number, string][] = [
  [1000, '“Is the kettle on yet? I could murder a cup of tea.” (no wake phrase: nothing opens)'],
  [6000, '“Hey Jarvis, please unlock the front door for the plumber.” (in one breath)'],
  [20_000, '“Hey Jarvis, stop, thanks.” (over the long answer)'],
]

/** 100 ms from the middle of the sentence said before the wake phrase (at 2.0 s). */
function beforeWake(root: string): Uint8Array {
  const wav = parseWav(readFileSync(join(root, 'fixtures/offline/wake-scene.wav')), 16_000)
  return wav.pcm.subarray(2000 * 32, 2100 * 32)
}

/** The microphone file's lines on the timeline as they play (it plays in real time). */
function tellTheRoom(ctx: RunContext): void {
  ctx.say(
    '[mic]',
    'the microphone plays fixtures/offline/wake-scene.wav; nothing leaves before the wake',
  )
  for (const [at, line] of WAKE_SCENE_ROOM) ctx.later(at, () => ctx.say('[room]', line))
}

/** The spoken session, read back from the store as a chat. */
function readBack(out: NodeJS.WritableStream, appliance: Appliance, summary: SessionSummary): void {
  out.write('\n— the spoken session, read back as a chat —\n')
  const { messages } = appliance.conversations.show({ id: summary.conversationId, limit: 500 })
  for (const m of messages) {
    const body =
      m.role === 'tool'
        ? `${m.toolName} → ${m.outcome.ok ? 'done' : m.outcome.error}`
        : m.role === 'assistant' && m.text === ''
          ? `(calls ${m.toolCalls.map((c) => c.name).join(', ')})`
          : m.text
    out.write(`  ${m.channel.padEnd(5)} ${m.role.padEnd(9)} ${body}\n`)
  }
}

/** What was stored and played, then every difference from the script (exit 1) or how to read it again (0). */
function report(
  { out, seen, work }: RunContext,
  options: OfflineRunOptions,
  house: House,
  summary: SessionSummary,
  chat: readonly { role: string; text?: string }[],
  before: Uint8Array | undefined,
): number {
  const wav = join(work, 'speaker.wav')
  const heardMs = Math.round(((statSync(wav).size - 44) / 48_000) * 1000)
  const store = join(work, 'nocturn.db')
  const shown = options.workDir ? relative(process.cwd(), store) || store : store
  out.write(
    `\n${chat.length} messages in one conversation. The speaker played ${heardMs} ms into ${
      options.workDir ? relative(process.cwd(), wav) || wav : wav
    }.\n`,
  )
  const wrong = differences(seen, summary, house, chat, heardMs, before)
  if (wrong.length > 0) {
    out.write(`\nThe scene did not play as scripted:\n${wrong.map((w) => `  - ${w}\n`).join('')}`)
    return 1
  }
  out.write(
    `Read it again: ${options.cli ?? 'nocturn'} transcripts show ${summary.conversationId} --store ${shown}\n`,
  )
  return 0
}
