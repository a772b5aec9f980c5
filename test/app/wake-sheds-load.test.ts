import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer, type Script } from '../../src/testing/fake-live-server/index.js'
import { hermeticAlsa } from '../helpers/alsa.js'
import { freePort, mosquittoBroker } from '../helpers/brokers.js'
import { type CpuQuota, makeCpuQuota, moveIntoQuota } from '../helpers/cpu-quota.js'
import { watchStatus } from '../helpers/device-mqtt.js'
import { fakeGpiod } from '../helpers/fake-gpiod.js'
import { startNocturnRun, writeRunConfig } from '../helpers/nocturn-process.js'
import { missingCommands, REQUIRE_SYSTEM } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { listeningRoom, roomTalk, wakeOnAlsa } from '../helpers/wake.js'

/**
 * A Pi 4's 10 % of a core at four times this machine's per-core time (issue 47), where the
 * detector still sheds load. At 1.7 % (×6) it sheds more and the event loop still turns, but its
 * delays (up to 2 s in bench/RESULTS.md) can let the button's volume step (1.8 s) fire before a
 * 1.2 s hold's release is handled, and the hold then talks no more: the panel's timing, not the
 * detector's.
 */
const QUOTA_PERCENT = 2.5
const missing = missingCommands('arecord', 'aplay', 'mosquitto', 'mosquitto_passwd')
const quota = missing ? undefined : makeCpuQuota('nocturn-wake-shed', QUOTA_PERCENT)
const skip = missing ?? (typeof quota === 'string' ? `no CPU quota: ${quota}` : undefined)
if (skip) {
  process.stdout.write(`skipped: ${skip}\n`)
  if (REQUIRE_SYSTEM) throw new Error(`NOCTURN_REQUIRE_SYSTEM: ${skip}`)
}

interface Status {
  state: string
  muted: boolean | null
  reason?: string
}

/** The model answers the hold's session with 20 s of a tone: long enough to be dropped. */
const answering = (): Script => {
  const tone = new Int16Array(24_000 * 20).map((_, i) => Math.round(6000 * Math.sin(i / 9)))
  return {
    steps: [
      { transcribe: 'Tell me a long story', afterAudioMs: 1500 },
      { speak: new Uint8Array(tone.buffer), chunkMs: 40 },
      { send: { serverContent: { turnComplete: true } } },
    ],
  }
}

/**
 * Issue 47: on a board too slow for the wake word, scoring is best-effort and the audio path comes
 * first. A real `nocturn run` in wake mode (the REAL openWakeWord detector, `arecord` on a FIFO
 * fed at the pace of real time with a room that never stops talking, the gpiod panel's
 * stand-ins, a real Mosquitto) is moved, once listening, into a cgroup of 2.5 % of one core. The
 * detector falls behind and sheds audio; the status and the LED say it cannot keep up, with the
 * fix; the event loop keeps turning (no watchdog, no microphone restart); the button's hold still
 * talks, its long press still drops the reply, its press still mutes.
 *
 * It once went unanswered for a minute in 3 of 7 runs on a busy machine: onnxruntime-node ran
 * every model synchronously on the main thread, so inside the quota the button's edges and the
 * panel's timers waited behind scoring. The models now run on a thread of their own at a lower
 * priority (adapters/openwakeword/model-thread.ts), and the event loop gets the quota first. The
 * machine running the suite may be busy: every wait is for a condition, with a generous bound.
 */
describe.skipIf(skip)(
  'a wake word that cannot keep up sheds load, and the speaker still answers its button',
  () => {
    const closers: (() => Promise<unknown> | unknown)[] = []
    afterAll(async () => {
      for (const c of closers.splice(0).reverse()) await Promise.resolve(c()).catch(() => {})
    })

    it(`inside ${QUOTA_PERCENT} % of a core: cannot keep up on the status, the button mutes, the long press drops`, async () => {
      const q = quota as CpuQuota
      // Last: the speaker's children (the recorder, the player) leave the cgroup as they exit.
      closers.push(async () => {
        await new Promise((r) => setTimeout(r, 1000))
        q.remove()
      })
      const work = mkdtempSync(join(tmpdir(), 'nocturn-shed-'))
      const broker = mosquittoBroker(await freePort())
      await broker.start()
      closers.push(() => broker.stop())
      const watcher = await watchStatus<Status>(broker.url)
      closers.push(() => watcher.close())
      const statuses = watcher.statuses
      const alsa = hermeticAlsa('fifo', { stall: false })
      const gpiod = fakeGpiod(2)
      closers.push(() => gpiod.cleanup())
      gpiod.scriptMonitor([
        [
          // The hold that talks (past the 0.8 s long press, short of the volume at 1.8 s)…
          { ms: 0, whenFile: 'hold', edge: 'falling' },
          { ms: 1200, edge: 'rising' },
          // …the long press while the reply plays, which drops it…
          { ms: 0, whenFile: 'stop', edge: 'falling' },
          { ms: 1200, edge: 'rising' },
          // …and the short press that mutes.
          { ms: 0, whenFile: 'mute', edge: 'falling' },
          { ms: 150, edge: 'rising' },
        ],
      ])
      const server = await FakeLiveServer.start({ scripts: [answering()], logger: silentLogger })
      closers.push(() => server.close())
      const config = writeRunConfig(
        work,
        { baseUrl: server.baseUrl, inputWav: '/nonexistent.wav', brokerUrl: broker.url },
        {
          ...wakeOnAlsa(alsa),
          panel: { backend: 'gpiod', button: 'GPIO17' },
          session: { idleTimeoutSeconds: 3 },
        },
      )
      const nocturn = startNocturnRun(config, {
        apiKey: 'shed-key',
        env: { ...gpiod.env, ALSA_CONFIG_PATH: alsa.env.ALSA_CONFIG_PATH },
      })
      closers.push(() => nocturn.stop('SIGKILL'))
      const feeds = await listeningRoom(nocturn, alsa.infile, closers)
      // The room talks from here on and never stops for the rest of the test.
      feeds.play(roomTalk(30), [{ i: 0 }])
      await nocturn.waitFor('the talk heard', () => feeds.heard(0, 4000), 30_000)
      const pid = nocturn.child.pid as number
      moveIntoQuota(q, pid)

      // The detector sheds load and says so: on the log, the retained status (error, the fix).
      const behind = await nocturn.waitForEvent('wake_word_cannot_keep_up', 90_000)
      expect(behind.msg).toContain('cannot keep up')
      await until(
        () => statuses.some((s) => s.state === 'error'),
        "statuses.some((s) => s.state === 'error')",
        60_000,
      )
      const error = statuses.find((s) => s.state === 'error')
      expect(error?.reason).toContain('cannot keep up on this board')
      expect(error?.reason).toContain('listen.mode "button"')

      // The hold still talks, and the reply it brings is dropped by the long press.
      gpiod.release('hold')
      await nocturn.waitForLine('the press to talk', (l) => l.msg === 'press to talk', 60_000)
      // The reply needs the session connected: a spoken "why" after a failed connect (the quota
      // can starve the setup past its 10 s) would otherwise pass for it below.
      await nocturn.waitFor(
        'the session connected',
        () => nocturn.saw('connection_opened') || nocturn.saw('voice_connection_failed'),
        120_000,
      )
      if (!nocturn.saw('connection_opened'))
        throw new Error(`the session did not connect inside the quota:\n${nocturn.tail()}`)
      // Past the earcon: 2.5 s of the reply (24 kHz, 16-bit) reached the speaker.
      const played = () => alsa.played().reduce((n, b) => n + b.length, 0)
      await nocturn.waitFor('the reply playing', () => played() > 2.5 * 48_000, 120_000)
      gpiod.release('stop')
      await nocturn.waitForLine(
        'the long press',
        (l) => l.msg === 'long press: stop speaking',
        60_000,
      )
      await nocturn.waitForLine(
        'the stop',
        (l) => l.msg === 'stop' && l.device === 'button',
        30_000,
      )
      // Dropped: far less than the 20 s reply reached the speaker.
      await new Promise((r) => setTimeout(r, 2000))
      expect(played()).toBeLessThan(12 * 48_000)

      // The press still mutes: on the status at once, whatever the detector is doing.
      gpiod.release('mute')
      await nocturn.waitForLine('muted', (l) => l.msg === 'muted', 30_000)
      await until(() => statuses.at(-1)?.muted === true, 'statuses.at(-1)?.muted === true', 60_000)

      // The event loop kept turning through it all: no watchdog kill, no microphone restart, and
      // the process still runs.
      expect(nocturn.child.exitCode).toBeNull()
      expect(nocturn.child.signalCode).toBeNull()
      const events = nocturn.lines.map((l) => l.event)
      // What the service said around a stall, if one came (bounded): the cause is in these lines.
      const stall = events.indexOf('audio_capture_stalled')
      if (stall >= 0) {
        const around = nocturn.lines.slice(Math.max(0, stall - 25), stall + 10)
        process.stdout.write(
          `around the stall:\n${around.map((l) => JSON.stringify(l)).join('\n')}\n`,
        )
      }
      expect(events).not.toContain('watchdog_stalled')
      expect(events).not.toContain('audio_capture_stalled')
      expect(events).not.toContain('audio_stream_failed')
      const stats = readFileSync(join(q.dir, 'cpu.stat'), 'utf8').replace(/\n/g, ' ')
      process.stdout.write(`inside ${QUOTA_PERCENT} %: ${stats}\n`)
    }, 420_000)
  },
)
