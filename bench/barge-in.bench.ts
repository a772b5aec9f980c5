// Barge-in by the wake word (issue 46 item 4): from the end of the phrase said over a reply to the
// speaker's silence, on the device's own path. The real `arecord` on a FIFO fed at the pace of real
// time (test/helpers/room-feed.ts), the REAL openWakeWord detector (hey_jarvis, default settings,
// native runtime), the real listening chain (test/voice/wake-world.ts) and the real ALSA speaker
// (Nocturn's paced buffer in front of `aplay`, onto a file-backed PCM: a drop kills aplay) against
// the fake Live service, whose reply is long enough to be talked over. Each barge-in is split:
//   detection  end of phrase (its last voiced sample into the FIFO, wall clock) → the detector's
//              listener told, itself split into → end of the firing chunk (capture time: chunk
//              alignment, the model's own latency, `consecutive`) and → told (capture delivery and
//              the scoring lag)
//   the rest   the listener told → `speaker.drop()` entered (the wake stage's checks, the claim,
//              the session loop, the driver)
//   drop       `speaker.drop()` entered → aplay sent SIGKILL (the speaker silent; the next player's
//              spawn, in the same call, comes after it and is left out)
// Two households: this speaker alone (no broker), and a second speaker online on a real Mosquitto
// (its status retained), which hears the same phrase quieter and claims it 0–80 ms later.
// BENCH_BARGES (default 12) barge-ins per household, one session each.
import { ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { createAlsaSpeaker } from '../src/adapters/alsa/alsa-speaker.js'
import { ArecordMic } from '../src/adapters/alsa/arecord-mic.js'
import { realClock } from '../src/adapters/clock/real-clock.js'
import { wakeSchema } from '../src/app/config/wake-schema.js'
import { silentLogger } from '../src/core/logger.js'
import { FakeLiveServer, serverFrame } from '../src/testing/fake-live-server/index.js'
import { hermeticAlsa } from '../test/helpers/alsa.js'
import { freePort, mosquittoBroker } from '../test/helpers/brokers.js'
import { RoomFeeds } from '../test/helpers/room-feed.js'
import { missingCommands } from '../test/helpers/system.js'
import { until } from '../test/helpers/wait.js'
import { FIXTURES, HEADS, MODEL_DIR, pinnedDetector, wavPcm } from '../test/helpers/wake.js'
import { heard, type WakeSpeaker, wakeSpeaker } from '../test/helpers/wake-speakers.js'
import { realWakeWorldOn } from '../test/voice/wake-world.js'
import { machineLine, quantile } from './machine.js'

const BARGES = Number(process.env.BENCH_BARGES ?? 12)
if (missingCommands('arecord', 'aplay', 'mosquitto', 'mosquitto_passwd')) process.exit(0)

const wall = () => performance.timeOrigin + performance.now()
/** When a child was last sent SIGKILL: the moment the speaker falls silent (aplay killed). */
let killedAt = 0
const kill = ChildProcess.prototype.kill
ChildProcess.prototype.kill = function (this: ChildProcess, signal?: NodeJS.Signals | number) {
  if (signal === 'SIGKILL') killedAt ||= wall()
  return kill.call(this, signal)
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The reply: 10 s of a quiet two-tone hum at 24 kHz (nobody hears it: no loopback here). */
function reply(): Uint8Array {
  const n = 24_000 * 10
  const out = Buffer.alloc(n * 2)
  for (let i = 0; i < n; i++) {
    const v =
      3000 *
      (Math.sin((2 * Math.PI * 220 * i) / 24_000) + Math.sin((2 * Math.PI * 330 * i) / 24_000))
    out.writeInt16LE(Math.round(v / 2), 2 * i)
  }
  return out
}

/** Byte offset just past the clip's last voiced sample (|x| ≥ 300). */
function voicedEnd(pcm: Uint8Array): number {
  const s = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.byteLength >> 1)
  let last = s.length - 1
  while (last > 0 && Math.abs(s[last] ?? 0) < 300) last--
  return (last + 1) * 2
}

interface Barge {
  toChunk: number
  toTold: number
  rest: number
  drop: number
}

async function household(
  hall: WakeSpeaker | undefined,
  kitchen: WakeSpeaker | undefined,
  arbitrateBargeIn = false,
) {
  const clip = wavPcm(join(FIXTURES, 'hey_jarvis.wav'))
  const clipEnd = voicedEnd(clip)
  const replyPcm = reply()
  const server = await FakeLiveServer.start({
    logger: silentLogger,
    scripts: [
      {
        steps: [
          { waitFor: 'realtimeInput' },
          // One reply every 7 s: each is talked over ~3 s in, the next starts in a quiet speaker.
          ...Array.from({ length: BARGES }, () => [
            { delayMs: 1000 },
            { speak: replyPcm, chunkMs: 40, transcript: false as const },
            { send: serverFrame.generationComplete() },
            { send: serverFrame.turnComplete() },
            { delayMs: 6000 },
          ]).flat(),
        ],
      },
    ],
  })
  const alsa = hermeticAlsa('fifo', { stall: false })
  const clock = realClock()
  const { speaker } = createAlsaSpeaker({
    device: alsa.playback,
    clock,
    logger: silentLogger,
    env: alsa.env,
  })
  const mic = new ArecordMic({ device: alsa.capture, clock, logger: silentLogger, env: alsa.env })
  let phraseEndAt = 0
  let target = Number.POSITIVE_INFINITY
  let targetRest = 0
  const feeds = new RoomFeeds([alsa.infile])
  feeds.start({
    onWrite: (_i, given) => {
      if (given >= target) {
        phraseEndAt = wall() - (given - target + targetRest) / 32
        target = Number.POSITIVE_INFINITY
      }
    },
  })
  const wake = wakeSchema.parse({
    models: [{ model: 'hey_jarvis' }],
    modelDir: MODEL_DIR,
    runtime: 'native',
  })
  const w = await realWakeWorldOn(server, wake, speaker, {
    source: mic,
    confirm: false,
    arbitrateBargeIn,
    ...(kitchen && { arbiter: kitchen.arbiter }),
  })
  let toldAt = 0
  const push = w.detections.push.bind(w.detections)
  w.detections.push = (...d) => {
    toldAt = wall()
    // The other speaker's detector fires on the same words a little later.
    if (hall && w.driver.sessionRunning) {
      setTimeout(() => void hall.arbiter.claim(heard(-45)), Math.random() * 80)
    }
    return push(...d)
  }
  let dropAt = 0
  let dropMs = 0
  const drop = speaker.drop.bind(speaker)
  speaker.drop = () => {
    dropAt = wall()
    killedAt = 0
    const r = drop()
    // Silent at aplay's SIGKILL; the next player's spawn, in the same call, comes after it.
    dropMs = (killedAt || wall()) - dropAt
    return r
  }
  const out: Barge[] = []
  try {
    await until(() => feeds.heard(0, 1000), 'the room heard 1 s', 60_000)
    // The wake that opens the session.
    feeds.play(clip, [{ i: 0 }])
    await until(() => w.driver.sessionRunning, 'a session', 60_000)
    for (let k = 0; k < BARGES; k++) {
      const replyBy = Date.now() + 15_000
      await until(() => speaker.queuedMs() > 5000 || Date.now() > replyBy, 'a reply queued', 60_000)
      if (speaker.queuedMs() <= 5000) {
        console.log(`barge-in ${k}: no reply playing`)
        continue
      }
      await sleep(3000)
      const drops = w.detections.length
      dropAt = 0
      feeds.play(clip, [{ i: 0 }])
      // `play` wrote the alignment frames already: the phrase's end is this many bytes on.
      const frameEnd = Math.ceil(clipEnd / 640) * 640
      target = feeds.given(0) + frameEnd
      targetRest = frameEnd - clipEnd
      // Bounded: a phrase the detector misses (or a reply that never came) is counted, not waited for.
      const deadline = Date.now() + 5000
      await until(() => dropAt > 0 || Date.now() > deadline, 'the drop', 60_000)
      await sleep(200)
      const d = w.detections[drops]
      if (!d || dropAt === 0) {
        console.log(`barge-in ${k}: no drop (${w.detections.length - drops} detections)`)
        continue
      }
      out.push({
        toChunk: d.heardAtMs - phraseEndAt,
        toTold: toldAt - phraseEndAt,
        rest: dropAt - toldAt,
        drop: dropMs,
      })
    }
  } finally {
    feeds.stop()
    await w.close()
    await speaker.close()
    await server.close()
  }
  return out
}

function row(name: string, xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b)
  return `| ${name} | ${s.length} | ${quantile(s, 0.5).toFixed(1)} | ${quantile(s, 0.99).toFixed(1)} | ${(s[0] ?? 0).toFixed(1)}–${(s.at(-1) ?? 0).toFixed(1)} |`
}

function table(title: string, b: Barge[]): void {
  console.log(`\n${title}\n\n| part | n | p50 ms | p99 ms | min–max ms |\n|---|---|---|---|---|`)
  console.log(
    row(
      'phrase end → speaker silent (aplay killed)',
      b.map((x) => x.toTold + x.rest + x.drop),
    ),
  )
  console.log(
    row(
      'detection: phrase end → detector told',
      b.map((x) => x.toTold),
    ),
  )
  console.log(
    row(
      '… of it: phrase end → end of the firing chunk (capture time)',
      b.map((x) => x.toChunk),
    ),
  )
  console.log(
    row(
      'the rest: detector told → speaker.drop() entered',
      b.map((x) => x.rest),
    ),
  )
  console.log(
    row(
      'drop: speaker.drop() entered → aplay killed',
      b.map((x) => x.drop),
    ),
  )
}

/**
 * The detector alone, offline (no scheduling): end of phrase → end of the firing chunk, for each
 * committed wake clip started at 8 offsets in a chunk, with `consecutive` chunks asked for.
 */
async function detectorAlone(consecutive: number): Promise<number[]> {
  const head = HEADS.find((h) => h.name === 'hey_jarvis')
  if (!head) throw new Error('no hey_jarvis head')
  const out: number[] = []
  let fired: number | undefined
  const d = await pinnedDetector({
    onWake: (w) => {
      fired ??= w.heardAtMs
    },
    phrases: [{ phrase: 'hey jarvis', file: head.file, threshold: 0.5 }],
    consecutive,
  })
  let base = 0
  for (const clip of ['hey_jarvis.wav', 'hey_jarvis-kal16.wav']) {
    const pcm = wavPcm(join(FIXTURES, clip))
    const end = voicedEnd(pcm) / 32
    for (let lead = 0; lead < 1280; lead += 160) {
      d.reset()
      fired = undefined
      const stream = new Uint8Array(64_000 + lead * 2 + pcm.byteLength + 32_000)
      stream.set(pcm, 64_000 + lead * 2)
      base += 100_000
      await d.scoreRecorded(stream, base)
      if (fired !== undefined) out.push(fired - (base + 2000 + lead / 16 + end))
    }
  }
  await d.close()
  return out
}

console.log(machineLine())
console.log(
  '\n| the detector alone, offline | n | p50 ms | p99 ms | min–max ms |\n|---|---|---|---|---|',
)
console.log(
  row('end of phrase → firing chunk, consecutive 2 (the default)', await detectorAlone(2)),
)
console.log(row('… consecutive 1 (for comparison only)', await detectorAlone(1)))
const alone = await household(undefined, undefined)
table('alone (no broker)', alone)
const broker = mosquittoBroker(await freePort())
await broker.start()
const kitchen = await wakeSpeaker(broker.url, 'kitchen', { settleMs: 30 })
const hall = await wakeSpeaker(broker.url, 'hall', { settleMs: 30 })
try {
  // Before and after in the same minutes: the barge-in claimed like any wake (before issue 46
  // item 4), then taken at once with the answering claim told after the drop.
  const before: Barge[] = []
  const after: Barge[] = []
  for (let round = 0; round < 2; round++) {
    before.push(...(await household(hall, kitchen, true)))
    after.push(...(await household(hall, kitchen)))
  }
  table(
    'another speaker online, BEFORE: the barge-in waits for its claim (real Mosquitto; the other speaker claims the phrase quieter, 0–80 ms later)',
    before,
  )
  table(
    'another speaker online, AFTER: taken at once, the answering claim told after the drop',
    after,
  )
  const reasons = kitchen.log
    .withEvent('wake_arbitrated')
    .map((r) => `${r.fields.reason}/${r.fields.waitedMs}`)
  console.log(`\nkitchen's claims (reason/waited ms): ${reasons.join(' ')}`)
  const hallReasons = hall.log.withEvent('wake_arbitrated').map((r) => `${r.fields.reason}`)
  console.log(`hall's claims (reason): ${hallReasons.join(' ')}`)
} finally {
  await kitchen.close()
  await hall.close()
  await broker.stop()
}
