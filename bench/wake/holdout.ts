// Voices the project never tuned on, and a television-like stream, for wake-holdout.bench.ts
// (issue 46's benchmarks). Debian: apt-get install espeak-ng flite festival festvox-kdlpc16k
// festvox-us-slt-hts sox fortunes (bench-only; no test needs them).
//
// TUNING: what the heads' thresholds, the household verifier and the local check's threshold were
// chosen with (bench/RESULTS.md): corpus.ts's voices — espeak-ng's 8 at 140/175 words a minute
// (and 130–190 in the missed-wake runs), flite kal, awb, rms, slt, festival kal — and flite kal16
// (the local check's 1e-12 was chosen on kal16, awb, rms, slt).
// HOLDOUT: none of those. espeak-ng variants and accents never used, at speeds never used; festival's
// ked diphone voice (another speaker), and its HTS voice built from SLT's recordings (the speaker
// of flite slt, a tuning voice, but another synthesis method: statistical, not unit selection);
// and each festival one again faster and higher or slower and lower (sox tempo and pitch).
// NEVER A TUNING VOICE: no voice the project tunes or trains on may use a holdout accent
// (en-gb-x-gbcwmd, en-gb-x-gbclan, en-us-nyc), a holdout variant (f4, klatt4, Annie, m5, m7) or a
// holdout speed (125, 185 words a minute) — companion-variants.ts's espeak-ng variants included,
// which `tuningEspeak` checks (it throws on any of them).
import { execFileSync, spawnSync } from 'node:child_process'
import { renameSync } from 'node:fs'
import { concat, type Spoken, utterance, type Voice, voices } from './corpus.js'

const RATE = 16_000
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0

/** The voices the project tuned on (corpus.ts's and flite kal16). */
export function tuningVoices(): Voice[] {
  const vs = voices()
  if (has('flite'))
    vs.push({
      name: 'flite-kal16',
      say: (t, wav) => execFileSync('flite', ['-voice', 'kal16', '-t', t, '-o', wav]),
    })
  return vs
}

function festival(voice: string, name: string, sox: string[] = []): Voice {
  return {
    name,
    say: (t, wav) => {
      execFileSync('text2wave', ['-eval', `(voice_${voice})`, '-o', wav], { input: t })
      if (sox.length === 0) return
      const tmp = `${wav}.sox.wav`
      execFileSync('sox', [wav, tmp, ...sox])
      renameSync(tmp, wav)
    },
  }
}

/** The holdout's espeak-ng voices (accent+variant) and speeds: never a tuning voice's. */
const HOLDOUT_ESPEAK = [
  'en-us-nyc+m7',
  'en-gb-x-gbcwmd+f4',
  'en-gb-x-gbclan+klatt4',
  'en-us+Annie',
  'en-us+m5',
] as const
const HOLDOUT_SPEEDS = [125, 185] as const
/** Accents only the holdout uses (en-us is the tuning voices' too: only its holdout variants are kept out). */
const HOLDOUT_ACCENTS = ['en-gb-x-gbcwmd', 'en-gb-x-gbclan', 'en-us-nyc']
const HOLDOUT_VARIANTS = HOLDOUT_ESPEAK.map((v) => v.split('+')[1] as string)

/**
 * An espeak-ng voice (`accent+variant`) at `speed` words a minute for TUNING, checked against the
 * holdout: it throws where the accent, the variant or the speed is one the holdout uses.
 */
export function tuningEspeak(voice: string, speed: number): Voice {
  const [accent = '', variant] = voice.split('+')
  const clash =
    (HOLDOUT_ACCENTS.includes(accent) && `accent ${accent}`) ||
    (variant !== undefined &&
      HOLDOUT_VARIANTS.some((h) => h.toLowerCase() === variant.toLowerCase()) &&
      `variant ${variant}`) ||
    ((HOLDOUT_SPEEDS as readonly number[]).includes(speed) && `speed ${speed}`)
  if (clash) throw new Error(`tuning voice ${voice} at ${speed} wpm uses the holdout's ${clash}`)
  return {
    name: `espeak-${voice}-${speed}`,
    say: (t, wav) => execFileSync('espeak-ng', ['-v', voice, '-s', String(speed), '-w', wav, t]),
  }
}

/** The voices never tuned on. Festival's are left out (said so) where they are not installed. */
export function holdoutVoices(): Voice[] {
  const out: Voice[] = []
  if (has('espeak-ng')) {
    for (const v of HOLDOUT_ESPEAK) {
      for (const s of HOLDOUT_SPEEDS) {
        out.push({
          name: `espeak-${v}-${s}`,
          say: (t, wav) => execFileSync('espeak-ng', ['-v', v, '-s', String(s), '-w', wav, t]),
        })
      }
    }
  }
  if (has('text2wave')) {
    out.push(festival('ked_diphone', 'festival-ked'))
    out.push(festival('ked_diphone', 'festival-ked-fast-high', ['tempo', '1.12', 'pitch', '200']))
    out.push(festival('cmu_us_slt_arctic_hts', 'festival-slt-hts'))
    out.push(
      festival('cmu_us_slt_arctic_hts', 'festival-slt-hts-slow-low', [
        'tempo',
        '0.9',
        'pitch',
        '-150',
      ]),
    )
  }
  return out
}

/** The engine a voice belongs to, for tables: pocketsphinx hears them very differently. */
export const engineOf = (v: string) => (v.startsWith('espeak') ? 'espeak-ng' : 'festival')

/** What follows the wake phrase, in one breath or after a pause. */
export const COMMANDS = [
  'what time is it',
  'turn off the lights in the kitchen',
  'set a timer for ten minutes',
]

/**
 * Television: news, weather, a quiz and a drama, a near-miss of "hey jarvis" in about one line in
 * three ("hey jars", "hey jarvish", "hey garvey", "jarvis" alone, and names close to it). None says
 * "hey jarvis" itself.
 */
export const TV = [
  'Good evening. The government has announced a new budget for schools and hospitals.',
  'Hey Jars, the kitchen shop on the high street, is closing after forty years.',
  'Police say the road will stay closed until the morning while repairs go on.',
  'In sport, the home side won three nil and moved to the top of the table.',
  'Mister Jarvis, the head teacher, said the pupils had done remarkably well.',
  'Markets fell sharply today as investors worried about the price of oil.',
  'Hey Garvey, come and look at this, the river has burst its banks again.',
  'Tomorrow will be cloudy in the north with showers spreading from the west.',
  'Temperatures will reach fourteen degrees in the south, a little cooler by the coast.',
  'Hey Jarvish, said the presenter, laughing at her own slip of the tongue.',
  'Winds will ease overnight, and frost is likely in sheltered valleys.',
  'The weekend looks bright and dry for most of us, with light winds.',
  'Welcome back to the quiz. Our first contestant is a teacher from Leeds.',
  'For ten points: which planet is known as the red planet?',
  'Hey Jervis, you have one minute on the history of the railways, starting now.',
  'That is correct, and you move into the lead with twenty two points.',
  'Which famous singer fronted the band Pulp? The answer is Jarvis Cocker.',
  'Hey Charvis, is that your final answer? Take your time.',
  'I am sorry, the answer we were looking for was the river Thames.',
  'You have passed on three questions, and scored fourteen points.',
  'Jarvis, bring the car round to the front, we are leaving at once.',
  'Very good, sir. Shall I tell her ladyship that you will not be dining?',
  'Hey Travis, did you lock the back door before we came out?',
  'I heard footsteps on the stairs, and then the lights went out.',
  'Harvey never came home that night, and nobody has seen him since.',
  'Hey Davis, hand me the torch, there is something under the floorboards.',
  'Jarvis is lying, I know it, he was in the garden at midnight.',
  'You should have told me about the letter before the police arrived.',
  'Hey Marvin, the inspector wants a word with you in the library.',
  'The storm is getting worse, we will be cut off by morning.',
  'And now, the headlines again: thousands turn out for the marathon in the rain.',
  'A jar of this honey sold for a hundred pounds at the village auction.',
  'Hey Jarvie, welcome to the show, tell us about your garden.',
  'The minister refused to comment on reports that she will resign.',
  'Scientists have found water ice near the south pole of the moon.',
  'Hey Harvest, the farm shop, has won the county prize for its cheese.',
  'Stay with us after the break for the late film, a thriller set in Paris.',
  'Coming up next: cooking on a budget, and a new series about old houses.',
  'Jarvis Street will be closed to traffic on Sunday for the festival.',
  'Thank you for watching, and have a very good night.',
]

/**
 * The television stream: holdout.ts's `TV` lines, the voices taking turns, for
 * WAKE_HOLDOUT_TV_MIN minutes (30 unless set).
 */
export function tvStream(vs: readonly Voice[]): ReturnType<typeof spokenStream> {
  const minutes = Number(process.env.WAKE_HOLDOUT_TV_MIN ?? 30)
  return spokenStream(
    TV.map((text, i) => ({ key: `tv${i}`, text })),
    vs,
    minutes,
    'tv',
  )
}

/**
 * The texts read one after another, the voices taking turns (a text's voice shifts by one on each
 * pass through the list, so every pass pairs them differently), 0.3–1 s apart, until `minutes`.
 */
export function spokenStream(
  texts: readonly { key: string; text: string }[],
  vs: readonly Voice[],
  minutes: number,
  prefix: string,
): { stream: Int16Array; timeline: Spoken[]; failed: string[] } {
  const pieces: Int16Array[] = []
  const timeline: Spoken[] = []
  const failed: string[] = []
  let at = 0
  for (let k = 0; at < minutes * 60 * RATE && texts.length > 0; k++) {
    const t = texts[k % texts.length] as { key: string; text: string }
    const v = vs[(k + Math.floor(k / texts.length)) % vs.length] as Voice
    let u: Int16Array
    try {
      u = utterance(v, t.text, `${prefix}-${v.name}-${t.key}`)
    } catch {
      // festival's diphone voices crash on a few texts; the text is left out, and counted.
      failed.push(`${v.name}: ${t.key}`)
      continue
    }
    const gap = new Int16Array((RATE * (300 + ((k * 137) % 700))) / 1000)
    timeline.push({ from: at, to: at + u.length, text: t.text, voice: v.name })
    pieces.push(u, gap)
    at += u.length + gap.length
  }
  return { stream: concat(pieces), timeline, failed }
}
