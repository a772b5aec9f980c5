import { join } from 'node:path'
import mqtt from 'mqtt'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createAlsaSpeaker } from '../../src/adapters/alsa/alsa-speaker.js'
import { ArecordMic } from '../../src/adapters/alsa/arecord-mic.js'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { wakeSchema } from '../../src/app/config/wake-schema.js'
import { silentLogger } from '../../src/core/logger.js'
import { wakeTopic } from '../../src/protocol/index.js'
import { FakeLiveServer, serverFrame } from '../../src/testing/fake-live-server/index.js'
import { hermeticAlsa } from '../helpers/alsa.js'
import { freePort, mosquittoBroker, PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { RoomFeeds } from '../helpers/room-feed.js'
import { missingCommands } from '../helpers/system.js'
import { sleep, until } from '../helpers/wait.js'
import { FIXTURES, MODEL_DIR, wavPcm } from '../helpers/wake.js'
import { heard, wakeSpeaker } from '../helpers/wake-speakers.js'
import { realWakeWorldOn } from './wake-world.js'

const skip = missingCommands('arecord', 'aplay', 'mosquitto', 'mosquitto_passwd')

/** The reply: 10 s of a two-tone hum at 24 kHz, every 20 ms of it different from silence. */
function hum(): Buffer {
  const n = 24_000 * 10
  const out = Buffer.alloc(n * 2)
  for (let i = 0; i < n; i++) {
    const t = (2 * Math.PI * i) / 24_000
    out.writeInt16LE(Math.round(1500 * (Math.sin(220 * t) + Math.sin(331 * t))), 2 * i)
  }
  return out
}

/**
 * Issue 46 item 4: the wake phrase said over a reply drops it at once, with another speaker of the
 * household online. The real `arecord` on a FIFO fed at the pace of real time, the REAL
 * openWakeWord detector (hey_jarvis, default settings), the real listening chain against the fake
 * Live service, and the device's own speaker path (the paced buffer in front of `aplay`, onto a
 * file-backed PCM). The barge-in on the speaker already in a session needs no arbitration: the
 * drop comes in the detector's own callback, before this speaker's claim has crossed the broker
 * (before, it waited out the claim window first), and the claim that follows it, marked
 * `answering`, makes the hall yield though the hall heard the words louder (before, the hall won
 * and the kitchen talked on). Order and bytes are asserted, never a time.
 */
describe.skipIf(skip)('barge-in by the wake phrase with another speaker online', () => {
  let broker: TestBroker
  const closers: (() => Promise<unknown>)[] = []
  beforeAll(async () => {
    broker = mosquittoBroker(await freePort())
    await broker.start()
  })
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c()
  })
  afterAll(async () => {
    await broker?.stop()
  })

  it('drops the reply before any claim crosses the broker; the hall yields to the speaker answering', async () => {
    const hall = await wakeSpeaker(broker.url, 'hall')
    const kitchen = await wakeSpeaker(broker.url, 'kitchen')
    closers.push(
      () => kitchen.close(),
      () => hall.close(),
    )
    const reply = hum()
    const server = await FakeLiveServer.start({
      logger: silentLogger,
      scripts: [
        {
          steps: [
            { waitFor: 'realtimeInput' },
            { speak: reply, chunkMs: 40, transcript: false },
            { send: serverFrame.generationComplete() },
            { send: serverFrame.turnComplete() },
          ],
        },
      ],
    })
    closers.push(() => server.close())
    const alsa = hermeticAlsa('fifo', { stall: false })
    const clock = realClock()
    const { speaker } = createAlsaSpeaker({
      device: alsa.playback,
      clock,
      logger: silentLogger,
      env: alsa.env,
    })
    closers.push(() => speaker.close())
    const mic = new ArecordMic({ device: alsa.capture, clock, logger: silentLogger, env: alsa.env })
    const feeds = new RoomFeeds([alsa.infile])
    feeds.start()
    closers.push(async () => feeds.stop())
    const wake = wakeSchema.parse({
      models: [{ model: 'hey_jarvis' }],
      modelDir: MODEL_DIR,
      runtime: 'native',
    })
    const w = await realWakeWorldOn(server, wake, speaker, {
      source: mic,
      confirm: false,
      arbiter: kitchen.arbiter,
    })
    closers.push(() => w.close())
    // One list, in order: the kitchen's detections, its drops, its earcons and LED, and every
    // claim as it crossed the broker (a third client, subscribed to the wake topic).
    const watcher = await mqtt.connectAsync(broker.url, { ...USERS.intruder, reconnectPeriod: 0 })
    closers.push(() => watcher.endAsync(true))
    watcher.on('message', (_t, p) => {
      if (p.length === 0) return
      const c = JSON.parse(p.toString()) as { device: string; answering?: boolean }
      w.order.push(`claim:${c.device}${c.answering ? ':answering' : ''}`)
    })
    await watcher.subscribeAsync(wakeTopic(PREFIX), { qos: 0 })
    const push = w.detections.push.bind(w.detections)
    w.detections.push = (...d) => {
      w.order.push('wake')
      // The hall hears the words over the kitchen's reply too, louder (the person stands nearer it).
      if (w.driver.sessionRunning) void hall.arbiter.claim(heard(-10))
      return push(...d)
    }
    let filesAtDrop = 0
    const drop = speaker.drop.bind(speaker)
    speaker.drop = () => {
      w.order.push('drop')
      filesAtDrop = alsa.played().length
      return drop()
    }
    const clip = wavPcm(join(FIXTURES, 'hey_jarvis.wav'))

    await until(() => feeds.heard(0, 1000), 'the recorder reading the FIFO', 20_000)
    feeds.play(clip, [{ i: 0 }])
    await until(() => speaker.queuedMs() > 5000, 'the reply in the speaker', 20_000)
    // Past the refractory time and the reply's first seconds, the phrase over the reply.
    await sleep(3000)
    const barge = w.order.length
    feeds.play(clip, [{ i: 0 }])
    await until(() => w.order.includes('drop'), 'the reply dropped', 20_000)
    await until(() => hall.log.withEvent('wake_arbitrated').length > 0, 'the hall decided', 20_000)
    await sleep(300)

    const after = w.order.slice(barge)
    // The drop in the detector's callback: no claim of anyone's crossed the broker before it.
    expect(after.slice(0, 2)).toEqual(['wake', 'drop'])
    expect(after).toContain('claim:kitchen:answering')
    expect(after.indexOf('claim:kitchen:answering')).toBeGreaterThan(after.indexOf('drop'))
    expect(kitchen.log.withEvent('wake_arbitrated').at(-1)?.fields).toMatchObject({
      won: true,
      reason: 'answering',
    })
    // The hall, though it heard the words louder, stays asleep: the kitchen is answering.
    expect(hall.log.withEvent('wake_arbitrated').map((r) => r.fields.won)).toEqual([false])
    // Bytes: the reply was cut (most of it never played), and nothing of it reached the device
    // after the drop: the players started after it got none of it.
    const played = alsa.played()
    expect(played[filesAtDrop - 1]?.byteLength ?? 0).toBeLessThan(reply.byteLength)
    const later = Buffer.concat(played.slice(filesAtDrop))
    for (let o = 0; o + 480 <= reply.byteLength; o += 4800) {
      expect(later.indexOf(reply.subarray(o, o + 480))).toBe(-1)
    }
    expect(w.driver.sessionRunning).toBe(true)
  }, 90_000)
})
