// The room hears why (issue 42 item 4): from `unreachable` to the sentence's PCM ready for the
// speaker, by where it comes from — a sentence kept on the device (a WAV read from the data
// folder, 24 kHz as a provider's speech makes it), espeak-ng (its command line, then resampled
// 22.05 → 24 kHz), the tone — and what the six sentences weigh on disk. espeak-ng's audio stands
// in for a provider's in the kept files (a provider's voice is slower, so its files are larger).
import { mkdtempSync, readdirSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EspeakSpeech } from '../src/adapters/espeak-ng/espeak-speech.js'
import { WavFolder } from '../src/adapters/wav/wav-folder.js'
import { silentLogger } from '../src/core/logger.js'
import { defaultPersona } from '../src/core/persona.js'
import { atRate } from '../src/device/pcm-rate.js'
import { WhyAudio } from '../src/device/why-audio.js'
import { WHY_REASONS, WHY_SENTENCES } from '../src/device/why-sentences.js'
import type { Speech } from '../src/ports/speech.js'
import { machineLine, quantile } from './machine.js'

const RUNS = 40
const RATE = 24_000
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6
const espeak = new EspeakSpeech()

/** A provider's speech, played by espeak-ng at 24 kHz (what a provider answers at). */
const provider: Speech = {
  async synthesize(request, signal) {
    const said = await espeak.synthesize(request, signal)
    return { pcm: atRate(said.pcm, said.sampleRateHz, RATE), sampleRateHz: RATE }
  },
}

async function timed(audio: WhyAudio, providers: string[]): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const reason = WHY_REASONS[i % WHY_REASONS.length] ?? 'offline'
    const t0 = process.hrtime.bigint()
    await audio.audio(reason, providers, new AbortController().signal)
    out.push(ms(t0))
  }
  return out.sort((a, b) => a - b)
}

const dir = mkdtempSync(join(tmpdir(), 'nocturn-why-bench-'))
const store = new WavFolder(dir)
const base = { store, persona: defaultPersona, rateHz: RATE, logger: silentLogger }
const kept = new WhyAudio({ ...base, speechFor: (p) => (p === 'gemini' ? provider : undefined) })
kept.make('gemini')
while (readdirSync(dir).filter((f) => f.endsWith('.wav')).length < WHY_REASONS.length) {
  await new Promise((r) => setTimeout(r, 20))
}
const local = new WhyAudio({ ...base, speechFor: () => undefined, local: espeak })
const missing = new WhyAudio({
  ...base,
  speechFor: () => undefined,
  local: new EspeakSpeech({ env: { PATH: mkdtempSync(join(tmpdir(), 'nocturn-no-espeak-')) } }),
})

process.stdout.write(`${machineLine()}\n\n`)
process.stdout.write(`| source | median (ms) | p90 (ms) | max (ms) |\n|---|---|---|---|\n`)
for (const [name, audio, providers] of [
  ['kept on the device (WAV read)', kept, ['gemini']],
  ['espeak-ng + resample', local, []],
  ['tone (espeak-ng missing)', missing, []],
] as const) {
  const t = await timed(audio, [...providers])
  process.stdout.write(
    `| ${name} | ${quantile(t, 0.5).toFixed(1)} | ${quantile(t, 0.9).toFixed(1)} | ${(t.at(-1) ?? 0).toFixed(1)} |\n`,
  )
}
const files = readdirSync(dir).filter((f) => f.endsWith('.wav'))
const bytes = files.reduce((n, f) => n + statSync(join(dir, f)).size, 0)
const seconds = (bytes - 44 * files.length) / (RATE * 2)
process.stdout.write(
  `\nkept: ${files.length} sentences, ${(bytes / 1024).toFixed(0)} KiB, ${seconds.toFixed(1)} s of speech (longest sentence: ${Math.max(...WHY_REASONS.map((r) => WHY_SENTENCES[r].length))} characters)\n`,
)
