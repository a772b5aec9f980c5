// The wake-mode listening chain's own latencies, over the real SDK against the fake Live service
// (test/voice/wake-world.ts: the fake detector below its port, the real WebRTC VAD, MicGate,
// router, session loop, voice driver). Per wake: detection → earcon written (the LED's listening
// state is set in the same turn: test/voice/wake-stage.test.ts), detection → first microphone
// byte at the service. Per barge-in: detection during a
// reply → speaker.drop(), beside the floor (drop() called in the same callback). The device's own
// drop (killing aplay) is audio.bench's "drops", and adds to both alike.

import { silentLogger } from '../src/core/logger.js'
import { FakeLiveServer } from '../src/testing/fake-live-server/index.js'
import { wakeMarkFrame } from '../src/testing/fake-wake-word.js'
import { speech16k, wakeWorld } from '../test/voice/wake-world.js'
import { machineLine } from './machine.js'

const WAKES = Number(process.env.WAKE_BENCH_WAKES ?? 20)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

function row(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b)
  return {
    n: s.length,
    'p50 ms': +quantile(s, 0.5).toFixed(2),
    'p99 ms': +quantile(s, 0.99).toFixed(2),
    'min–max ms': `${(s[0] ?? 0).toFixed(2)}–${(s.at(-1) ?? 0).toFixed(2)}`,
  }
}

async function main() {
  const earcon: number[] = []
  const firstByte: number[] = []
  const drop: number[] = []
  const floor: number[] = []
  for (let i = 0; i < WAKES; i++) {
    const server = await FakeLiveServer.start({ logger: silentLogger })
    const w = await wakeWorld(server, { confirm: false, detectorLatencyMs: 0 })
    const marks: Record<string, number> = {}
    const write = w.speaker.write.bind(w.speaker)
    w.speaker.write = (pcm) => {
      marks.earcon ??= performance.now()
      write(pcm)
    }
    const dropNow = w.speaker.drop.bind(w.speaker)
    w.speaker.drop = () => {
      marks.drop = performance.now()
      return dropNow()
    }
    await w.say(speech16k('speech-en-us-m.wav', 1000, 900))
    w.frame(wakeMarkFrame())
    await server.until(() => server.connections[0]?.heardAudio().length, 5000)
    const got = performance.now()
    const fired = w.detector.firedAt[0] as number
    earcon.push((marks.earcon as number) - fired)
    firstByte.push(got - fired)
    // A reply playing; the person says the wake phrase over it.
    w.speaker.write(new Uint8Array(24_000 * 2 * 3))
    await sleep(2100) // past the refractory time
    await w.say(speech16k('speech-en-gb-f.wav', 1000, 600))
    w.frame(wakeMarkFrame())
    await sleep(100)
    drop.push((marks.drop as number) - (w.detector.firedAt[1] as number))
    // The floor: the same callback, dropping directly.
    const t0 = performance.now()
    dropNow()
    floor.push(performance.now() - t0)
    await w.close()
    await server.close()
  }
  console.log(`\nwake-mode chain, ${WAKES} wakes (${machineLine()}):`)
  console.table({
    'detection → earcon written': row(earcon),
    'detection → first mic byte at the fake service (local loopback)': row(firstByte),
    'detection during a reply → speaker.drop()': row(drop),
    'floor: speaker.drop() itself': row(floor),
  })
}

await main()
