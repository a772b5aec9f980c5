import { afterEach, describe, expect, it } from 'vitest'
import { ArecordMic } from '../../src/adapters/alsa/arecord-mic.js'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MicGate } from '../../src/audio/mic-gate.js'
import { silentLogger } from '../../src/core/logger.js'
import { defaultPersona } from '../../src/core/persona.js'
import { ToolSet } from '../../src/core/tool-set.js'
import type { AudioIn, AudioInSink } from '../../src/ports/audio.js'
import { FakeLiveLLM } from '../../src/testing/fake-live-llm.js'
import { FakeSpeaker } from '../../src/testing/fake-speaker.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { VoiceDriver } from '../../src/voice/voice-driver.js'
import { hermeticAlsa, processExists } from '../helpers/alsa.js'
import { coreFixture } from '../helpers/core.js'
import { vadClip } from '../helpers/fixtures.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { timeTool } from './harness.js'

const skip = missingCommands('arecord', 'mkfifo')

const stops: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const s of stops.splice(0)) await s()
})

/** Passes a source through, writing down every error and whether the source called it recoverable. */
function tapErrors(source: AudioIn) {
  const errors: { code: unknown; recoverable: boolean }[] = []
  const tapped: AudioIn = {
    sampleRateHz: source.sampleRateHz,
    start: (sink: AudioInSink) =>
      source.start({
        frame: (pcm, at) => sink.frame(pcm, at),
        error: (e, recoverable) => {
          errors.push({ code: (e as { code?: unknown }).code, recoverable })
          sink.error(e, recoverable)
        },
      }),
    stop: () => source.stop(),
  }
  return { tapped, errors }
}

describe.skipIf(skip)('a recorder hiccup mid-session: real arecord on a file-backed PCM', () => {
  it('arecord killed: reported recoverable, the capture restarts, the session goes on and its audio reaches the model', async () => {
    const alsa = hermeticAlsa(vadClip('speech-en-us-m.wav'))
    const core = coreFixture({ timeoutMs: 120_000 })
    const arecord = new ArecordMic({
      device: alsa.capture,
      clock: realClock(),
      logger: silentLogger,
      env: alsa.env,
      backoff: { initialMs: 20, maxMs: 200, healthyMs: 5000 },
    })
    stops.push(() => arecord.stop())
    const { tapped, errors } = tapErrors(arecord)
    const speaker = new FakeSpeaker(core.clock)
    const llm = new FakeLiveLLM({ clock: core.clock })
    const driver = new VoiceDriver({
      llm,
      tools: new ToolSet([timeTool]),
      gate: core.gate,
      store: core.store,
      persona: defaultPersona,
      clock: core.clock,
      logger: new MemoryLogger(),
      mic: new MicGate({ source: tapped, speaker, clock: core.clock, echo: 'aec', tailMs: 300 }),
      speaker,
      options: { idleMs: 10 * 60_000, budgetMs: 30 * 60_000 },
    })
    let ended = false
    const done = driver.runSession().finally(() => {
      ended = true
    })
    await settle()
    const conn = llm.current
    if (!conn) throw new Error('no connection opened')
    await until(
      () => conn.audioFrames > 0 && arecord.pid !== undefined,
      'conn.audioFrames > 0 && arecord.pid !== undefined',
      60_000,
    )
    const first = arecord.pid as number
    process.kill(first, 'SIGKILL')
    await until(() => errors.length > 0, 'errors.length > 0', 60_000)
    await until(
      () => arecord.pid !== undefined && arecord.pid !== first,
      'arecord.pid !== undefined && arecord.pid !== first',
      60_000,
    )
    const before = conn.audioFrames
    await until(() => conn.audioFrames > before + 10, 'conn.audioFrames > before + 10', 60_000)
    await settle()
    expect(errors[0]).toEqual({ code: 'NOC_ERR_AUDIO_DEVICE_FAILED', recoverable: true })
    expect(processExists(first)).toBe(false)
    expect(ended).toBe(false)
    expect(driver.state).not.toBe('error')
    expect(llm.connections).toHaveLength(1)
    await driver.stop()
    expect((await done).reason).toBe('stopped')
  })
})
