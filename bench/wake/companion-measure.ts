// The companion head measured on the HOLDOUT voices with wake-holdout.bench.ts's method: the real
// detector as the service makes it (hey_jarvis at 0.5, two chunks, coarse scoring at COARSE_HOP,
// the 40 ms second phase), once with the pretrained head alone and once with the companion beside
// it, on the same clips (wake-holdout's placement and noise) and the same streams; every wake on
// the streams also goes to the real local check (pocketsphinx at its default 1e-12) on the 2 s
// pre-roll the wake stage would hand it.
import type { CompanionModel } from '../../src/adapters/openwakeword/companion.js'
import type { VerifierStage } from '../../src/adapters/openwakeword/verifier.js'
import {
  DEBIAN_MODEL_DIR,
  KeyphraseCheck,
} from '../../src/adapters/pocketsphinx/keyphrase-check.js'
import { COARSE_HOP } from '../../src/app/wake-detector.js'
import { DEFAULT_WAKE_PRE_ROLL_MS } from '../../src/audio/wake-onset.js'
import type { WakeDetection } from '../../src/ports/wake-word.js'
import { HEADS, pinnedDetector } from '../../test/helpers/wake.js'
import { bytes, concat, mixUnder, noiseConditions } from './corpus.js'
import { COMMANDS, holdoutVoices, spokenStream, tvStream } from './holdout.js'
import { inProcess } from './near-miss-check.js'
import { wakeClip } from './pause.js'
import { fortuneTexts, proseAvailable, upper95 } from './prose.js'

const RATE = 16_000
const DEFAULT_KWS = 1e-12

const silence = (ms: number) => new Int16Array((ms * RATE) / 1000)
export function placedClip(clip: Int16Array, k: number, noise?: [Int16Array, number]): Int16Array {
  const padded = concat([silence(1000 + ((k * 10) % 80)), clip, silence(1000)])
  return noise ? mixUnder(padded, clip, noise[0], noise[1], (k * 7919) % noise[0].length) : padded
}
const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)} % (${n})`

/** A service detector, with or without the companion, and a way to score a stream on it. */
export async function serviceDetector(
  companion: CompanionModel | undefined,
  check?: VerifierStage,
) {
  const head = HEADS.find((h) => h.name === 'hey_jarvis')
  let wakes: WakeDetection[] = []
  const d = await pinnedDetector({
    onWake: (w) => wakes.push(w),
    phrases: [
      { phrase: 'hey_jarvis', file: head?.file ?? '', threshold: 0.5, companion, verifier: check },
    ],
    coarseHop: COARSE_HOP,
    // A stage of the bench's (near-miss-check.ts) is asked where the chain runs: in process.
    ...(check ? { runtime: await inProcess() } : {}),
  })
  let clock = 0
  return {
    close: () => d.close(),
    score: async (pcm: Int16Array) => {
      d.reset()
      wakes = []
      const startMs = clock
      const t0 = process.cpuUsage()
      clock = (await d.scoreRecorded(bytes(pcm), startMs)) + 10_000
      const used = process.cpuUsage(t0)
      return { wakes, startMs, cpuMs: (used.user + used.system) / 1000 }
    },
  }
}

/**
 * With `nearMiss` (wake-near-miss.bench.ts), the two detectors are the companion's without and
 * with the near-miss check: "pretrained alone" then reads "without the check", "with the
 * companion" "with the check". With `against`, "pretrained alone" is that companion (another gate).
 */
export async function measureCompanion(
  companion: CompanionModel,
  out: (s: string) => void,
  nearMiss?: VerifierStage,
  against?: CompanionModel,
): Promise<void> {
  const vs = holdoutVoices()
  if (nearMiss) out('\n(columns: the companion without → with the near-miss check)')
  if (against)
    out(
      against.gate === companion.gate
        ? '\n(columns: the companion built before → this one, the same gate)'
        : `\n(columns: the companion asked from gate ${against.gate} → from gate ${companion.gate})`,
    )
  const alone = await serviceDetector(nearMiss ? companion : against)
  const both = await serviceDetector(companion, nearMiss)
  // WAKE_COMPANION_PART=missed|false: one half only.
  const part = process.env.WAKE_COMPANION_PART ?? ''
  if (part !== 'false') await missedRows(vs, alone, both, out)
  if (part !== 'missed') await falseRows(vs, alone, both, out)
  await alone.close()
  await both.close()
}

type Service = Awaited<ReturnType<typeof serviceDetector>>

async function missedRows(
  vs: ReturnType<typeof holdoutVoices>,
  alone: Service,
  both: Service,
  out: (s: string) => void,
): Promise<void> {
  out(`\n### Missed wakes, holdout voices (${vs.length}: ${vs.map((v) => v.name).join(', ')})\n`)
  // WAKE_COMPANION_CONDITIONS=clean,pink 10 dB: those rows only (the same clips: k runs on).
  const wanted = process.env.WAKE_COMPANION_CONDITIONS?.split(',')
  // WAKE_COMPANION_CHECK=1: each wake's pre-roll also to the local check (missed when it refuses).
  const check =
    process.env.WAKE_COMPANION_CHECK === '1'
      ? KeyphraseCheck.create({ phrases: ['hey jarvis'], threshold: DEFAULT_KWS })
      : undefined
  out(
    `| condition | command | clips | missed, pretrained alone | missed, with the companion | espeak-ng / festival, alone → with |${check ? ' festival with the check on, alone → with |' : ''}`,
  )
  out(`|---|---|---|---|---|---|${check ? '---|' : ''}`)
  let k = 0
  for (const [name, noise, snr] of noiseConditions()) {
    for (const pause of [false, true]) {
      if (wanted && !wanted.includes(name)) {
        k += vs.length * COMMANDS.length
        continue
      }
      let n = 0
      const missed = [0, 0]
      const checked = [0, 0]
      const byEngine = new Map<string, number[]>()
      for (const v of vs) {
        for (const c of COMMANDS) {
          const pcm = placedClip(wakeClip(v, c, pause), k++, noise && [noise, snr])
          n++
          const engine = v.name.startsWith('espeak') ? 'espeak-ng' : 'festival'
          const e = byEngine.get(engine) ?? [0, 0]
          byEngine.set(engine, e)
          for (const [i, d] of [alone, both].entries()) {
            const { wakes, startMs } = await d.score(pcm)
            const w = wakes[0]
            if (check && engine === 'festival' && !(w && (await agrees(check, pcm, startMs, w)))) {
              checked[i] = (checked[i] ?? 0) + 1
            }
            if (w) continue
            missed[i] = (missed[i] ?? 0) + 1
            e[i] = (e[i] ?? 0) + 1
          }
        }
      }
      out(
        `| ${name} | ${pause ? 'after a pause' : 'one breath'} | ${n} | ${pct(missed[0] ?? 0, n)} | ${pct(missed[1] ?? 0, n)} | ${[...byEngine].map(([e, m]) => `${e} ${m[0]} → ${m[1]}`).join('; ')} |${check ? ` ${checked[0]} → ${checked[1]} |` : ''}`,
      )
    }
  }
  await check?.close()
}

/** The local check on the pre-roll the wake stage would hand it: the 2 s up to the wake. */
async function agrees(
  check: KeyphraseCheck,
  pcm: Int16Array,
  startMs: number,
  w: WakeDetection,
): Promise<boolean> {
  const end = Math.min(pcm.length, Math.round(((w.heardAtMs - startMs + 20) * RATE) / 1000))
  const roll = pcm.subarray(Math.max(0, end - (DEFAULT_WAKE_PRE_ROLL_MS * RATE) / 1000), end)
  return (await check.check(bytes(roll))).agreed
}

async function falseRows(
  vs: ReturnType<typeof holdoutVoices>,
  alone: Service,
  both: Service,
  out: (s: string) => void,
): Promise<void> {
  const check = KeyphraseCheck.create({ phrases: ['hey jarvis'], threshold: DEFAULT_KWS })
  const streams: [string, ReturnType<typeof spokenStream>][] = []
  if (proseAvailable(out)) {
    const minutes = Number(process.env.WAKE_HOLDOUT_PROSE_MIN ?? 60)
    streams.push(['ordinary speech (fortunes)', spokenStream(fortuneTexts(), vs, minutes, 'prose')])
  }
  streams.push(['television with near-miss names', tvStream(vs)])
  out(`\n### False wakes, holdout voices (pocketsphinx ${DEBIAN_MODEL_DIR} at ${DEFAULT_KWS})\n`)
  out(
    '| stream | minutes | detector | wakes = audio sent, check off (/h; 95 % bound) | audio sent, check on | CPU ms per audio s |',
  )
  out('|---|---|---|---|---|---|')
  const details: string[] = []
  for (const [name, { stream, timeline }] of streams) {
    const hours = stream.length / RATE / 3600
    for (const [label, d] of [
      ['pretrained alone', alone],
      ['with the companion', both],
    ] as const) {
      const { wakes, startMs, cpuMs } = await d.score(stream)
      let sent = 0
      for (const w of wakes) {
        const at = w.heardAtMs - startMs
        const agreed = await agrees(check, stream, startMs, w)
        if (agreed) sent++
        const said = timeline.findLast((u) => (u.from / RATE) * 1000 <= at - 200)
        details.push(
          `  ${label}, ${name.split(' ')[0]} ${(at / 1000).toFixed(1)} s, ${w.score.toFixed(2)}: ${said?.voice} "${said?.text}" — ${agreed ? 'SENT' : 'refused'}`,
        )
      }
      const rate = (x: number) =>
        `${x} (${(x / hours).toFixed(1)}/h; ≤ ${upper95(x, hours).toFixed(1)})`
      out(
        `| ${name} | ${(hours * 60).toFixed(1)} | ${label} | ${rate(wakes.length)} | ${rate(sent)} | ${(cpuMs / (hours * 3600)).toFixed(1)} |`,
      )
    }
  }
  out('\nWhat fired (the utterance said 200 ms before the firing chunk ended; the local check):')
  for (const d of details) out(d)
  await check.close()
}
