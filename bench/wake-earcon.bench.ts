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
import { join } from 'node:path'
import { silentLogger } from '../src/core/logger.js'
import { FakeLiveServer } from '../src/testing/fake-live-server/index.js'
import { wakeMarkFrame } from '../src/testing/fake-wake-word.js'
import { freePort, mosquittoBroker } from '../test/helpers/brokers.js'
import { missingCommands } from '../test/helpers/system.js'
import { FIXTURES, HEADS, pinnedDetector, wavPcm } from '../test/helpers/wake.js'
import { heard, wakeSpeaker } from '../test/helpers/wake-speakers.js'
import { speech16k, wakeWorld } from '../test/voice/wake-world.js'
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

const broker = mosquittoBroker(await freePort())
await broker.start()
const det = await detection()
const alone = await earcon(broker.url, undefined)
const chunkApart = await earcon(broker.url, 80)
const together = await earcon(broker.url, 10)
await broker.stop()
console.log(machineLine())
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
