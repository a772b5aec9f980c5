// Wake → earcon, alone in the household and with another speaker online (issue 46 item 3), in two
// parts reported apart:
//   detection  the real openWakeWord detector (hey_jarvis, default threshold, native runtime) on
//              the committed wake clips, scored as a stream: from the end of the phrase (the clip's
//              last voiced sample) to the end of the chunk that fired. Offline, so it is the
//              detector's own latency, without this machine's scheduling.
//   the rest   detection → earcon written, over the real listening chain (test/voice/wake-world.ts:
//              the fake detector firing at once, the real VAD, MicGate, router, session loop) and a
//              real Mosquitto on loopback with the kitchen's real arbiter: alone (no other speaker's
//              status online), and with the hall online (a second arbiter with its status, as the
//              appliance runs it). Monotonic clock; one wake per fresh world.
//   first byte the whole chain on the REAL detector (test/voice/wake-world.ts's realWakeWorld: the
//              pretrained hey_jarvis head as the service makes it, the fake microphone fed at the
//              pace of real time), flite kal16's "hey jarvis" (fixtures/wake) and a command, alone
//              in the household: from the end of the phrase to the detection told, the earcon
//              written and the first audio byte at the fake Live service — with the local check
//              (listen.localCheck, Debian's pocketsphinx at its default threshold) off, and on
//              (skipped, said so, without pocketsphinx). BENCH_FIRST_BYTE_WAKES (default 20) each; BENCH_ONLY=first-byte for this part alone.
//   run        a real `nocturn run` in wake mode, alone (no broker): `arecord` on a FIFO fed in
//              real time, the service's detector and its paced reads (320 ms bursts far below the
//              threshold, 80 ms near it). From the moment the phrase's last voiced frame went into
//              the FIFO to the `wake phrase heard` line and to `opening a session` (the earcon is
//              written in that turn), by the lines' times on this machine's clock. `aplay` on a file
//              PCM hands the earcon on a period at a time, so the file cannot time it. The fake
//              microphone of the parts above has no read cadence: a read that came late hid from
//              them (bench/RESULTS.md, "two speakers, one wake").
//              BENCH_RUN_WAKES (default 20); BENCH_ONLY=run for this part alone.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  DEBIAN_MODEL_DIR,
  DEFAULT_MARGIN,
  DEFAULT_THRESHOLD,
  KeyphraseCheck,
} from '../src/adapters/pocketsphinx/keyphrase-check.js'
import { wakeSchema } from '../src/app/config/wake-schema.js'
import { parseWav } from '../src/audio/wav.js'
import { silentLogger } from '../src/core/logger.js'
import { FakeLiveServer } from '../src/testing/fake-live-server/index.js'
import { wakeMarkFrame } from '../src/testing/fake-wake-word.js'
import { DEFAULT_CONFIRM_PHRASES } from '../src/voice/wake-confirmation.js'
import { hermeticAlsa } from '../test/helpers/alsa.js'
import { freePort, mosquittoBroker } from '../test/helpers/brokers.js'
import { startNocturnRun, writeRunConfig } from '../test/helpers/nocturn-process.js'
import { RoomFeeds } from '../test/helpers/room-feed.js'
import { missingCommands } from '../test/helpers/system.js'
import {
  FIXTURES,
  HEADS,
  MODEL_DIR,
  pinnedDetector,
  wakeOnAlsa,
  wavPcm,
} from '../test/helpers/wake.js'
import { heard, wakeSpeaker } from '../test/helpers/wake-speakers.js'
import { realWakeWorld, speech16k, wakeWorld } from '../test/voice/wake-world.js'
import { machineLine, quantile } from './machine.js'

const WAKES = Number(process.env.BENCH_WAKES ?? 30)
if (missingCommands('mosquitto', 'mosquitto_passwd')) process.exit(0)

function row(name: string, xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b)
  return `| ${name} | ${s.length} | ${quantile(s, 0.5).toFixed(1)} | ${quantile(s, 0.99).toFixed(1)} | ${(s[0] ?? 0).toFixed(1)}–${(s.at(-1) ?? 0).toFixed(1)} |`
}

/** End of phrase → firing chunk's end, ms, for each clip started at several offsets in a chunk. */
async function detection(): Promise<number[]> {
  const head = HEADS.find((h) => h.name === 'hey_jarvis')
  if (!head) throw new Error('no hey_jarvis head')
  const out: number[] = []
  let fired: number | undefined
  const d = await pinnedDetector({
    onWake: (w) => {
      fired ??= w.heardAtMs
    },
    phrases: [{ phrase: 'hey jarvis', file: head.file, threshold: 0.5 }],
  })
  for (const clip of [
    'hey_jarvis.wav',
    'hey_jarvis-kal16.wav',
    'near-miss-hey_jarvish-kal16.wav',
  ]) {
    const pcm = wavPcm(join(FIXTURES, clip))
    const samples = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.byteLength >> 1)
    let last = samples.length - 1
    while (last > 0 && Math.abs(samples[last] ?? 0) < 300) last--
    for (let lead = 0; lead < 1280; lead += 160) {
      d.reset()
      fired = undefined
      const stream = new Uint8Array(64_000 + lead * 2 + pcm.byteLength)
      stream.set(pcm, 64_000 + lead * 2)
      // Each run later in capture time than the refractory after the one before.
      await d.scoreRecorded(stream, out.length * 100_000 + lead * 10_000)
      const end = out.length * 100_000 + lead * 10_000 + ((32_000 + lead + last) / 16_000) * 1000
      if (fired !== undefined) out.push(fired - end)
    }
  }
  await d.close()
  return out
}

/**
 * `hallLagMs`: the hall hears the same words (quieter) and its detector fires this long after the
 * kitchen's (a random lag up to it); undefined: no other speaker.
 */
async function earcon(
  brokerUrl: string,
  hallLagMs: number | undefined,
): Promise<{ ms: number[]; windows: number[] }> {
  const withHall = hallLagMs !== undefined
  const out: number[] = []
  const kitchen = await wakeSpeaker(brokerUrl, 'kitchen', { settleMs: 30 })
  const hall = withHall ? await wakeSpeaker(brokerUrl, 'hall', { settleMs: 30 }) : undefined
  for (let i = 0; i < WAKES; i++) {
    const server = await FakeLiveServer.start({ logger: silentLogger })
    const w = await wakeWorld(server, {
      confirm: false,
      detectorLatencyMs: 0,
      arbiter: kitchen.arbiter,
    })
    let at: number | undefined
    const write = w.speaker.write.bind(w.speaker)
    w.speaker.write = (pcm) => {
      at ??= performance.now()
      write(pcm)
    }
    await w.say(speech16k('speech-en-us-m.wav', 1000, 900))
    w.frame(wakeMarkFrame())
    if (hall && hallLagMs !== undefined) {
      const lag = Math.random() * hallLagMs
      setTimeout(() => void hall.arbiter.claim(heard(-45)), lag)
    }
    await server.until(() => at !== undefined, 5000)
    out.push((at as number) - (w.detector.firedAt[0] as number))
    await w.close()
    await server.close()
    await new Promise((r) => setTimeout(r, 200))
  }
  const windows = kitchen.log
    .withEvent('wake_arbitrated')
    .map((r) => Number(r.fields.windowMs ?? 0))
  await kitchen.close()
  await hall?.close()
  return { ms: out, windows }
}

/** flite kal16's "hey jarvis", its last voiced sample, and a second of a command to follow it. */
function phraseAndCommand(): { phrase: Uint8Array; last: number; command: Uint8Array } {
  const phrase = wavPcm(join(FIXTURES, 'hey_jarvis-kal16.wav'))
  const samples = new Int16Array(phrase.buffer, phrase.byteOffset, phrase.byteLength >> 1)
  let last = samples.length - 1
  while (last > 0 && Math.abs(samples[last] ?? 0) < 300) last--
  const command = parseWav(
    readFileSync(join(import.meta.dirname, '..', 'fixtures', 'vad', 'speech-en-gb-f.wav')),
    16_000,
  ).pcm.subarray(32_000, 64_000)
  return { phrase, last, command }
}

/** listen.localCheck.threshold's default (src/app/config/schema.ts). */
const DEFAULT_KWS = 1e-12
const FIRST_BYTE_WAKES = Number(process.env.BENCH_FIRST_BYTE_WAKES ?? 20)

interface FirstByte {
  readonly detected: number[]
  readonly earcon: number[]
  readonly firstByte: number[]
  /** The head did not fire; it fired and no audio reached the model (the check refused). */
  readonly missed: number
  readonly refused: number
}

/**
 * Phrase end → detection told, earcon written and first audio byte at the fake Live service, ms,
 * on the real detector in real time; `local`: the local check holds the audio until it agrees.
 */
async function firstByte(local: KeyphraseCheck | undefined, afterMs = 0): Promise<FirstByte> {
  const wake = wakeSchema.parse({
    models: [{ model: 'hey_jarvis' }],
    modelDir: MODEL_DIR,
    runtime: 'native',
  })
  const { phrase, last, command } = phraseAndCommand()
  const r = { detected: [] as number[], earcon: [] as number[], firstByte: [] as number[] }
  let missed = 0
  let refused = 0
  for (let i = 0; i < FIRST_BYTE_WAKES; i++) {
    const server = await FakeLiveServer.start({ logger: silentLogger })
    const w = await realWakeWorld(server, wake, {
      confirm: {
        phrases: DEFAULT_CONFIRM_PHRASES,
        withinMs: 3000,
        ...(local && { local, localAfterMs: afterMs }),
      },
    })
    // Timestamps as each thing happens: the detection told, the earcon, the first audio frame.
    let detectedAt: number | undefined
    let earconAt: number | undefined
    let byteAt: number | undefined
    const push = w.detections.push.bind(w.detections)
    w.detections.push = (...d) => {
      detectedAt ??= performance.now()
      return push(...d)
    }
    const write = w.speaker.write.bind(w.speaker)
    w.speaker.write = (pcm) => {
      earconAt ??= performance.now()
      write(pcm)
    }
    const received = server.received.push.bind(server.received)
    server.received.push = (...f) => {
      if (f.some((x) => x.frame.realtimeInput !== undefined)) byteAt ??= performance.now()
      return received(...f)
    }
    // The phrase starts somewhere else in a chunk each time (10 ms steps through 80 ms).
    const lead = new Uint8Array((1500 + ((i * 10) % 80)) * 32)
    const pcm = Buffer.concat([lead, phrase, command, new Uint8Array(32_000)])
    const endFrame = Math.floor((lead.byteLength + (last + 1) * 2) / 640)
    let phraseEnd = 0
    await w.say(pcm, (k, f) => {
      if (k === endFrame) phraseEnd = performance.now()
      return f
    })
    await server.until(() => byteAt !== undefined, 5000).catch(() => undefined)
    if (detectedAt === undefined) missed++
    else if (earconAt === undefined || byteAt === undefined) refused++
    else {
      r.detected.push(detectedAt - phraseEnd)
      r.earcon.push(earconAt - phraseEnd)
      r.firstByte.push(byteAt - phraseEnd)
    }
    await w.close()
    await server.close()
  }
  return { ...r, missed, refused }
}

const RUN_WAKES = Number(process.env.BENCH_RUN_WAKES ?? 20)

/** The end of the phrase → the wake heard, and → the session opening, ms, through `nocturn run`. */
async function throughRun(): Promise<{ heard: number[]; opened: number[]; missed: number }> {
  const { phrase, last, command } = phraseAndCommand()
  const work = mkdtempSync(join(tmpdir(), 'nocturn-earcon-run-'))
  const alsa = hermeticAlsa('fifo', { stall: false })
  const server = await FakeLiveServer.start({ scripts: [], logger: silentLogger })
  const config = writeRunConfig(
    work,
    { baseUrl: server.baseUrl, inputWav: '/nonexistent.wav', brokerUrl: 'mqtt://127.0.0.1:1' },
    {
      ...wakeOnAlsa(alsa, { localCheck: { enabled: false }, confirm: { enabled: false } }),
      mqtt: undefined,
      session: { idleTimeoutSeconds: 2 },
    },
  )
  const nocturn = startNocturnRun(config, {
    apiKey: 'earcon-run-key',
    env: { ALSA_CONFIG_PATH: alsa.env.ALSA_CONFIG_PATH },
  })
  // When each frame went into the FIFO: the phrase's end is looked for among them.
  let endGiven = Number.POSITIVE_INFINITY
  let phraseEnd: number | undefined
  const feeds = new RoomFeeds([alsa.infile])
  feeds.start({
    onWrite: (_, given) => {
      if (phraseEnd === undefined && given >= endGiven) phraseEnd = Date.now()
    },
  })
  const out = { heard: [] as number[], opened: [] as number[], missed: 0 }
  try {
    await nocturn.waitForLine(
      'listening for the wake phrase',
      (l) => l.msg === 'listening for the wake phrase',
      90_000,
    )
    await nocturn.waitFor('the recorder fed', () => feeds.heard(0, 1000), 30_000)
    // Past the start's own work (the prefill's rest, the cold pages' release after ~5 s).
    await new Promise((r) => setTimeout(r, 8000))
    for (let i = 0; i < RUN_WAKES; i++) {
      const heardBefore = nocturn.lines.filter((l) => l.msg === 'wake phrase heard').length
      // The phrase starts somewhere else in a chunk each time (10 ms steps through 80 ms).
      const lead = new Uint8Array((500 + ((i * 10) % 80)) * 32)
      const pcm = Buffer.concat([lead, phrase, command])
      phraseEnd = undefined
      endGiven = Number.POSITIVE_INFINITY
      feeds.play(pcm, [{ i: 0 }])
      // play() wrote the frames that align the sound at once; the sound starts after them.
      endGiven = feeds.given(0) + lead.byteLength + (last + 1) * 2
      const end = Date.now() + 6000
      const opening = () =>
        nocturn.lines.filter((l) => l.msg === 'wake phrase heard: opening a session')[heardBefore]
      while (Date.now() < end && opening() === undefined) {
        await new Promise((r) => setTimeout(r, 20))
      }
      const heardLine = nocturn.lines.filter((l) => l.msg === 'wake phrase heard')[heardBefore]
      if (phraseEnd === undefined) throw new Error('the phrase never went into the FIFO')
      const opened = opening()
      if (heardLine === undefined || opened === undefined) out.missed++
      else {
        out.heard.push(Number(heardLine.time) - phraseEnd)
        out.opened.push(Number(opened.time) - phraseEnd)
      }
      // The session idles out, closes, and the refractory time passes before the next.
      await new Promise((r) => setTimeout(r, 6000))
      await nocturn.waitFor('the room idle', () => feeds.idle, 30_000)
    }
  } finally {
    feeds.stop()
    await nocturn.stop('SIGKILL')
    await server.close()
  }
  return out
}

const only = process.env.BENCH_ONLY ?? ''
console.log(machineLine())
const runMissing = missingCommands('arecord', 'aplay')
if (only === 'run' && runMissing)
  console.log(`through \`nocturn run\`: not measured (${runMissing})`)
else if (only === 'run') {
  const r = await throughRun()
  console.log(
    '\n| through `nocturn run`, from the end of the phrase (real arecord, paced reads, alone) | n | p50 ms | p99 ms | min–max ms |\n|---|---|---|---|---|',
  )
  console.log(row('→ `wake phrase heard` logged', r.heard))
  console.log(
    row('→ `opening a session` logged (the earcon is written in the same turn)', r.opened),
  )
  console.log(`| the head missed (no session within 6 s) | ${r.missed} | | | |`)
}
if (only !== 'first-byte' && only !== 'run') {
  const broker = mosquittoBroker(await freePort())
  await broker.start()
  const det = await detection()
  const alone = await earcon(broker.url, undefined)
  const chunkApart = await earcon(broker.url, 80)
  const together = await earcon(broker.url, 10)
  await broker.stop()
  console.log('\n| part | n | p50 ms | p99 ms | min–max ms |\n|---|---|---|---|---|')
  console.log(row('detection: end of phrase → firing chunk (real detector, offline)', det))
  console.log(row('detection → earcon written, alone in the household', alone.ms))
  console.log(row('… another speaker online, its detector 0–80 ms later', chunkApart.ms))
  console.log(row('… another speaker online, its detector 0–10 ms later', together.ms))
  for (const [name, r] of [
    ['0–80 ms', chunkApart],
    ['0–10 ms', together],
  ] as const) {
    console.log(`windows used (ms), hall ${name} later: ${r.windows.join(' ')}`)
  }
}
if (only === '' || only === 'first-byte') {
  const skipCheck =
    missingCommands('pocketsphinx_continuous') ??
    (existsSync(join(DEBIAN_MODEL_DIR, 'cmudict-en-us.dict')) ? undefined : 'no pocketsphinx-en-us')
  const off = await firstByte(undefined)
  const check = skipCheck
    ? undefined
    : KeyphraseCheck.create({ phrases: ['hey jarvis'], threshold: DEFAULT_KWS })
  const on = check ? await firstByte(check) : undefined
  await check?.close()
  // Weighed against its competitors, hearing 200 ms past the detection (bench/wake/nearmiss.ts).
  const weighed = skipCheck
    ? undefined
    : KeyphraseCheck.create({
        phrases: ['hey jarvis'],
        threshold: DEFAULT_THRESHOLD.weighed,
        competitors: { margin: DEFAULT_MARGIN },
      })
  const weighedOn = weighed ? await firstByte(weighed, 200) : undefined
  await weighed?.close()
  console.log(
    '\n| from the end of the phrase (real detector, real time, alone) | n | p50 ms | p99 ms | min–max ms |\n|---|---|---|---|---|',
  )
  for (const [name, r] of [
    ['local check off (the default)', off],
    [`local check on (${DEFAULT_KWS})`, on],
    ['local check weighed against its competitors, +200 ms', weighedOn],
  ] as const) {
    if (!r) {
      console.log(`| ${name}: not measured (${skipCheck}) | | | | |`)
      continue
    }
    console.log(row(`${name}: → detection told`, r.detected))
    console.log(row(`${name}: → earcon written`, r.earcon))
    console.log(row(`${name}: → first audio byte at the model`, r.firstByte))
    console.log(
      `| ${name}: the head missed / fired but nothing reached the model | ${r.missed} / ${r.refused} | | | |`,
    )
  }
}
