// Nocturn's paced speaker on aplay in a process of its own, for the slow-board gap runs of
// audio.bench.ts: the benchmark puts this process (and so the aplay it starts) in a cgroup with a
// CPU quota, while the sound server and the monitors it listens with stay outside.
//
// Settings in NOCTURN_BENCH_SPEAKER (JSON): base ("dist" or "src") and the playback PCM. Reads
// frames on stdin: a 4-byte little-endian length and that many bytes of PCM, or length 0 for the
// model's end of reply. Prints `ready` once the player runs; exits when stdin closes.
const s = JSON.parse(process.env.NOCTURN_BENCH_SPEAKER ?? '{}')
const base = new URL(`../../${s.base}/`, import.meta.url)
const mod = (p) => import(new URL(p, base).href)
const [{ createAlsaSpeaker }, { realClock }, { silentLogger }] = await Promise.all([
  mod('adapters/alsa/alsa-speaker.js'),
  mod('adapters/clock/real-clock.js'),
  mod('core/logger.js'),
])
const { speaker } = createAlsaSpeaker({ device: s.playback, clock: realClock(), logger: silentLogger })
let pending = Buffer.alloc(0)
process.stdin.on('data', (c) => {
  pending = pending.length === 0 ? c : Buffer.concat([pending, c])
  while (pending.length >= 4) {
    const n = pending.readUInt32LE(0)
    if (pending.length < 4 + n) break
    if (n === 0) speaker.endOfReply()
    else speaker.write(new Uint8Array(pending.subarray(4, 4 + n)))
    pending = pending.subarray(4 + n)
  }
})
process.stdin.on('end', async () => {
  await speaker.close()
  process.exit(0)
})
setTimeout(() => process.stdout.write('ready\n'), 300)
