import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ArecordMic } from '../../src/adapters/alsa/arecord-mic.js'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import type { ScoreListener } from '../../src/adapters/openwakeword/detector.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { type WakeConfig, wakeSchema } from '../../src/app/config/wake-schema.js'
import { createWakeDetector } from '../../src/app/wake-detector.js'
import { MicGate } from '../../src/audio/mic-gate.js'
import { MicRouter } from '../../src/audio/mic-router.js'
import { VoicedHistory } from '../../src/audio/voiced-history.js'
import { WakeOnset } from '../../src/audio/wake-onset.js'
import { parseWav } from '../../src/audio/wav.js'
import { LiveConversations } from '../../src/conversations/live-conversations.js'
import { Gate } from '../../src/core/gate.js'
import { Grants } from '../../src/core/grants.js'
import type { Logger } from '../../src/core/logger.js'
import { defaultPersona } from '../../src/core/persona.js'
import { ToolSet } from '../../src/core/tool-set.js'
import type { AudioIn, AudioOut } from '../../src/ports/audio.js'
import type { Onset } from '../../src/ports/onset.js'
import type { LedState } from '../../src/ports/panel.js'
import type { WakeArbiter } from '../../src/ports/wake-arbiter.js'
import type { WakeDetection, WakeListener, WakeWordDetector } from '../../src/ports/wake-word.js'
import { ManualApprover } from '../../src/testing/approvers.js'
import type { FakeLiveServer, Script } from '../../src/testing/fake-live-server/index.js'
import { FakeMic } from '../../src/testing/fake-mic.js'
import { FakeSpeaker } from '../../src/testing/fake-speaker.js'
import { FakeWakeWord, wakeMarkFrame } from '../../src/testing/fake-wake-word.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { EARCON_MS, earconPcm } from '../../src/tools/chime.js'
import { SessionLoop } from '../../src/voice/session-loop.js'
import type { SessionSummary } from '../../src/voice/session-types.js'
import { VoiceDriver } from '../../src/voice/voice-driver.js'
import { DEFAULT_CONFIRM_PHRASES, type WakeCheck } from '../../src/voice/wake-confirmation.js'
import { geminiLive } from '../gemini/helpers.js'
import { hermeticAlsa } from '../helpers/alsa.js'
import { MODEL_DIR } from '../helpers/wake.js'

const ROOT = join(import.meta.dirname, '../..')
export const FRAME_BYTES = 640

/** 16 kHz speech from the VAD fixtures, from its onset on: a voice the speech detector hears. */
export function speech16k(file = 'speech-en-us-m.wav', fromMs = 1000, ms = 1000): Uint8Array {
  const wav = parseWav(readFileSync(join(ROOT, 'fixtures/vad', file)), 16_000)
  const from = fromMs * 32
  return wav.pcm.subarray(from, from + ms * 32)
}

export interface WakeWorldOptions<S extends AudioOut = FakeSpeaker> {
  readonly echo?: 'gate' | 'aec'
  /** The second opinion; `false`: a local wake is believed. */
  readonly confirm?: WakeCheck | false
  readonly detectorLatencyMs?: number
  readonly arbiter?: WakeArbiter
  /** As before issue 46 item 4: a wake over a session waits for the claim like any other. */
  readonly arbitrateBargeIn?: boolean
  readonly preRollMs?: number
  /** The microphone below the gate (a real recorder); a fake the test speaks into otherwise. */
  readonly source?: AudioIn
  /** Called as the wake stage resets its detector (after each session). */
  readonly onDetectorReset?: () => void
  /** Told the speaker before the microphone starts (a loopback of the playback needs it). */
  readonly beforeStart?: (speaker: S) => void
  /** Told of every onset the room hears, as the composition's hook is (`running`: a barge-in). */
  readonly onHeard?: (onset: Onset, running: boolean) => void
  readonly onSessionEnd?: (summary: SessionSummary) => void
  /** A session with nothing said for this long ends (10 minutes unless set). */
  readonly idleMs?: number
}

/**
 * The wake-mode listening chain over the real SDK: a microphone behind the MicGate, the router,
 * the wake stage (the fake detector below its port, the real WebRTC VAD), the session loop and
 * the voice driver against the fake Live `server`, a fake speaker on the real clock and an
 * in-memory store. `order` records, in order, the earcon, every LED state and every connection.
 */
export function wakeWorld(server: FakeLiveServer, o: WakeWorldOptions = {}) {
  return world(
    server,
    o,
    (listener) => new FakeWakeWord({ listener, latencyMs: o.detectorLatencyMs ?? 160 }),
    fakeSpeaker(),
  )
}

function fakeSpeaker(): FakeSpeaker {
  return new FakeSpeaker(realClock(), { keepAudio: true })
}

/**
 * The same chain on the real openWakeWord detector, as `createWakeDetector` makes it from `wake`
 * (the pretrained models of the devDependency: test/helpers/wake.ts); `onScores` hears every chunk's scores.
 */
export function realWakeWorld(
  server: FakeLiveServer,
  wake: WakeConfig,
  o: Omit<WakeWorldOptions, 'detectorLatencyMs'> & { readonly onScores?: ScoreListener } = {},
) {
  return realWakeWorldOn(server, wake, fakeSpeaker(), o)
}

/** The real detector's chain playing to `speaker` (the device's own speaker path, say). */
export function realWakeWorldOn<S extends AudioOut>(
  server: FakeLiveServer,
  wake: WakeConfig,
  speaker: S,
  o: Omit<WakeWorldOptions<S>, 'detectorLatencyMs'> & { readonly onScores?: ScoreListener } = {},
) {
  return world(
    server,
    o,
    (listener, logger) =>
      createWakeDetector(wake, {
        onWake: listener,
        logger,
        ...(o.onScores && { onScores: o.onScores }),
      }),
    speaker,
  )
}

async function world<D extends WakeWordDetector, S extends AudioOut>(
  server: FakeLiveServer,
  o: WakeWorldOptions<S>,
  makeDetector: (listener: WakeListener, logger: Logger) => D | Promise<D>,
  speaker: S,
) {
  const clock = realClock()
  const log = new MemoryLogger()
  const store = new SqliteStore(':memory:')
  const gate = new Gate({
    policies: {},
    approver: new ManualApprover(),
    grants: new Grants(store),
    clock,
    approvalTimeoutMs: 60_000,
  })
  const fake = new FakeMic()
  const source = o.source ?? fake
  const mic = new MicGate({ source, speaker, clock, echo: o.echo ?? 'gate', tailMs: 300 })
  const router = new MicRouter(mic)
  const order: string[] = []
  const states: LedState[] = []
  let stage: WakeOnset | undefined
  /** Every detection the detector told, before the wake stage's checks. */
  const detections: WakeDetection[] = []
  const detector = await makeDetector((d) => {
    detections.push(d)
    stage?.detected(d)
  }, log)
  // What the detector was given since its last reset: a reset forgets what it had not scored yet.
  let sinceReset = 0
  stage = new WakeOnset({
    detector: {
      phrases: detector.phrases,
      push: (f, at, voiceNearby) => {
        sinceReset += f.byteLength
        detector.push(f, at, voiceNearby)
      },
      setThresholds: (t) => detector.setThresholds(t),
      reset: () => {
        sinceReset = 0
        o.onDetectorReset?.()
        detector.reset()
      },
      close: () => detector.close(),
    },
    voiced: await VoicedHistory.create(),
    clock,
    logger: log,
    speakerAudible: () => mic.echoGated,
    ...(o.arbiter && { arbiter: o.arbiter }),
    ...(!o.arbitrateBargeIn && { answering: () => driver.answering }),
    ...(o.preRollMs !== undefined && { preRollMs: o.preRollMs }),
  })
  const wake = stage
  let roomBytes = 0
  mic.onRoom((pcm, at) => {
    roomBytes += pcm.byteLength
    wake.room(pcm, at)
  })
  const driver = new VoiceDriver({
    llm: geminiLive({ baseUrl: server.baseUrl, logger: log }),
    tools: new ToolSet([]),
    gate,
    store,
    persona: defaultPersona,
    clock,
    logger: log,
    mic: router.sessionMic(),
    speaker,
    listener: {
      state: (s) => {
        states.push(s)
        order.push(`led:${s}@${server.connections.length}`)
      },
    },
    options: { idleMs: o.idleMs ?? 10 * 60_000, budgetMs: 30 * 60_000 },
  })
  const summaries: SessionSummary[] = []
  let falseWakes = 0
  const earcon = earconPcm(speaker.sampleRateHz)
  const confirm =
    o.confirm === false
      ? undefined
      : (o.confirm ?? { phrases: DEFAULT_CONFIRM_PHRASES, withinMs: 1500 })
  const loop = new SessionLoop({
    router,
    onset: wake,
    driver,
    live: new LiveConversations(),
    logger: log,
    clock,
    ...(confirm && { confirm }),
    heard: (onset) => {
      o.onHeard?.(onset, driver.sessionRunning)
      order.push(`earcon@${server.connections.length}`)
      speaker.write(earcon)
      mic.hearNow(EARCON_MS + 50)
    },
    onFalseWake: () => falseWakes++,
    onSessionEnd: (s) => {
      summaries.push(s)
      o.onSessionEnd?.(s)
    },
  })
  const seenConnections = () => server.connections.length
  o.beforeStart?.(speaker)
  await loop.start()
  let sent = 0
  /** One 20 ms frame into the microphone now, captured now. */
  const frame = (pcm: Uint8Array) => {
    fake.sink?.frame(pcm, clock.now())
    sent++
  }
  /** `pcm` into the microphone in 20 ms frames at the pace of real time. */
  const say = async (pcm: Uint8Array, each?: (i: number, f: Uint8Array) => Uint8Array) => {
    const t0 = Date.now()
    for (let i = 0, o2 = 0; o2 + FRAME_BYTES <= pcm.byteLength; i++, o2 += FRAME_BYTES) {
      const f = pcm.subarray(o2, o2 + FRAME_BYTES)
      frame(each ? each(i, f) : f)
      const due = t0 + (i + 1) * 20
      const wait = due - Date.now()
      if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    }
  }
  return {
    clock,
    log,
    store,
    speaker,
    mic,
    driver,
    loop,
    detector,
    detections,
    order,
    states,
    summaries,
    earcon,
    seenConnections,
    falseWakes: () => falseWakes,
    framesSent: () => sent,
    /** Bytes the wake stage has heard (the MicGate's room tap). */
    roomBytes: () => roomBytes,
    /** Bytes the detector was given since the stage last reset it. */
    detectorBytesSinceReset: () => sinceReset,
    frame,
    say,
    /** The wake phrase: a second of speech, ending in the frame the fake detector fires on. */
    async sayWake() {
      await say(speech16k())
      frame(wakeMarkFrame())
    },
    async close() {
      await loop.stop()
      await wake.close()
      store.close()
    },
  }
}

/**
 * The real `arecord` on a hermetic FIFO capture PCM (fed by `RoomFeeds` on `alsa.infile`), and the
 * pinned hey_jarvis model at the configuration's defaults on the native runtime.
 */
export function arecordOnFifo() {
  const alsa = hermeticAlsa('fifo', { stall: false })
  const mic = new ArecordMic({
    device: alsa.capture,
    clock: realClock(),
    logger: new MemoryLogger(),
    env: alsa.env,
  })
  const wake = wakeSchema.parse({
    models: [{ model: 'hey_jarvis' }],
    modelDir: MODEL_DIR,
    runtime: 'native',
  })
  return { alsa, mic, wake }
}

/** The model hears the wake phrase and a question, and answers. */
export const answering = (): Script => ({
  steps: [
    { transcribe: 'Hey Jarvis, what time is it?', afterAudioMs: 500, timeoutMs: 20_000 },
    { speak: 'time', chunkMs: 40 },
    { send: { serverContent: { turnComplete: true } } },
  ],
})
