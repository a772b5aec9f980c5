// A detector's CPU per 10 s of a talking room (the VAD fixtures' speech, scored as fast as it
// goes, coarse as the service), before and after onnxruntime's cold code pages are given back, in
// one process: ROUNDS (8) runs each after 5 unmeasured; the release's own time on the calling
// thread; the process's page faults (minor/major) before it, after the first run and at the end.
// `node --import tsx bench/wake/cold-pages-steady.ts`. Prints one JSON line; asserts nothing.
import { readFileSync } from 'node:fs'
import { releaseColdPages } from '../../src/adapters/libc/cold-pages.js'
import { NATIVE_LIBRARIES } from '../../src/adapters/openwakeword/runtime.js'
import { HEADS, pinnedDetector } from '../../test/helpers/wake.js'
import { roomAudio } from './room-audio.js'

const h = HEADS.find((x) => x.name === 'hey_jarvis')
if (!h) throw new Error('no hey_jarvis head')
const d = await pinnedDetector({
  onWake() {},
  phrases: [{ phrase: h.phrase, file: h.file, threshold: 0.5 }],
  coarseHop: 2,
})
await d.afterChunks(0)
const talk = roomAudio('talk').subarray(0, 32_000 * 10)
const cpuOf = async () => {
  const c = process.cpuUsage()
  d.reset()
  await d.scoreRecorded(talk)
  const u = process.cpuUsage(c)
  return (u.user + u.system) / 1000
}
const faults = () => {
  const s = readFileSync('/proc/self/stat', 'utf8')
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
  return `${f[7]}/${f[9]}`
}
for (let i = 0; i < 5; i++) await cpuOf()
const rounds = Number(process.env.ROUNDS ?? 8)
const a: number[] = []
for (let i = 0; i < rounds; i++) a.push(await cpuOf())
const f0 = faults()
const t = performance.now()
const r = await releaseColdPages(NATIVE_LIBRARIES)
const took = performance.now() - t
const first = await cpuOf()
const f1 = faults()
const b: number[] = []
for (let i = 0; i < rounds; i++) b.push(await cpuOf())
const med = (x: number[]) => [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)]!.toFixed(1)
console.log(
  JSON.stringify({
    release: r,
    tookMs: took.toFixed(1),
    before: med(a),
    firstAfter: first.toFixed(1),
    after: med(b),
    a: a.map((x) => x.toFixed(0)),
    b: b.map((x) => x.toFixed(0)),
    faultsBefore: f0,
    faultsAfterFirst: f1,
    faultsEnd: faults(),
  }),
)
await d.close()
