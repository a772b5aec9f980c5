// TTS speech for wake-word.bench.ts, made at bench time with espeak-ng, flite and festival (Debian:
// apt-get install espeak-ng flite festival sox; fortunes for prose.ts) and cached under
// var/bench-wake (git-ignored).
// Every utterance is 16 kHz mono s16le, its own silence trimmed. TTS speech is not a human in a
// room: these voices are formant and diphone synthesis, far from what the heads learnt from.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { pinkNoise as seededPink } from '../../src/adapters/openwakeword/augment.js'

const CACHE = join(import.meta.dirname, '..', '..', 'var', 'bench-wake')

export interface Voice {
  readonly name: string
  say(text: string, wav: string): void
}

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0

/** Every voice of the three engines this machine has; espeak-ng voices at two speeds. */
export function voices(speeds: readonly number[] = [140, 175]): Voice[] {
  const out: Voice[] = []
  if (has('espeak-ng')) {
    const es = [
      'en-us',
      'en-gb',
      'en-gb-scotland',
      'en-us+f3',
      'en-us+m3',
      'en-gb-x-rp',
      'en-029',
      'en-us+f2',
    ]
    for (const v of es) {
      for (const s of speeds) {
        out.push({
          name: `espeak-${v}-${s}`,
          say: (t, wav) => execFileSync('espeak-ng', ['-v', v, '-s', String(s), '-w', wav, t]),
        })
      }
    }
  }
  if (has('flite')) {
    for (const v of ['kal', 'awb', 'rms', 'slt']) {
      out.push({
        name: `flite-${v}`,
        say: (t, wav) => execFileSync('flite', ['-voice', v, '-t', t, '-o', wav]),
      })
    }
  }
  if (has('text2wave')) {
    out.push({
      name: 'festival-kal',
      say: (t, wav) => execFileSync('text2wave', ['-o', wav], { input: t }),
    })
  }
  return out
}

/** One utterance as 16 kHz s16le samples, from the cache or made now. */
export function utterance(voice: Voice, text: string, key: string): Int16Array {
  mkdirSync(CACHE, { recursive: true })
  const raw = join(CACHE, `${key}.s16`)
  if (!existsSync(raw)) {
    const wav = join(CACHE, `${key}.tts.wav`)
    voice.say(text, wav)
    // Trim the voice's own lead-in and tail, 16 kHz, peak at -6 dBFS.
    execFileSync('sox', [
      '-R',
      wav,
      '-r',
      '16000',
      '-c',
      '1',
      '-b',
      '16',
      '-e',
      'signed-integer',
      '-L',
      '-t',
      'raw',
      raw,
      'silence',
      '1',
      '0.005',
      '0.5%',
      'reverse',
      'silence',
      '1',
      '0.005',
      '0.5%',
      'reverse',
      'norm',
      '-6',
    ])
    rmSync(wav)
  }
  const b = readFileSync(raw)
  return new Int16Array(b.buffer, b.byteOffset, b.byteLength >> 1)
}

/** `seconds` of sox's pink noise, or a music-like bed (plucked chords and a bass line), cached. */
export function bed(kind: 'pink' | 'music', seconds: number): Int16Array {
  mkdirSync(CACHE, { recursive: true })
  const raw = join(CACHE, `${kind}-${seconds}.s16`)
  if (!existsSync(raw)) {
    const fmt = ['-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', '-L', '-t', 'raw']
    const synth =
      kind === 'pink'
        ? ['synth', String(seconds), 'pinknoise']
        : [
            'synth',
            String(seconds),
            'pluck',
            'C3',
            'pluck',
            'E4',
            'pluck',
            'G4',
            'sine',
            'C2',
            'tremolo',
            '3',
            '60',
          ]
    execFileSync('sox', ['-R', '-n', ...fmt, raw, ...synth, 'norm', '-12'])
  }
  const b = readFileSync(raw)
  return new Int16Array(b.buffer, b.byteOffset, b.byteLength >> 1)
}

/**
 * Pink noise of our own (Paul Kellet's filter over a seeded white source), peak at -12 dBFS: a
 * room whose noise is not the very samples of sox's pink bed the test conditions are mixed with.
 */
export function pinkNoise(seconds: number, seed: number): Int16Array {
  const b = seededPink(seconds, seed)
  return new Int16Array(b.buffer, b.byteOffset, b.byteLength >> 1)
}

export function rms(x: Int16Array): number {
  let s = 0
  for (const v of x) s += v * v
  return Math.sqrt(s / Math.max(1, x.length))
}

/** `speech` with `noise` (looped from `offset`) mixed under it at `snrDb` (RMS of each), clipped. */
export function mix(speech: Int16Array, noise: Int16Array, snrDb: number, offset = 0): Int16Array {
  const gain = rms(speech) / (rms(noise) * 10 ** (snrDb / 20))
  const out = new Int16Array(speech.length)
  for (let i = 0; i < speech.length; i++) {
    const v = (speech[i] ?? 0) + gain * (noise[(offset + i) % noise.length] ?? 0)
    out[i] = Math.max(-32768, Math.min(32767, Math.round(v)))
  }
  return out
}

/** Joins pieces into one stream. */
export function concat(pieces: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(pieces.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of pieces) {
    out.set(p, at)
    at += p.length
  }
  return out
}

export const bytes = (x: Int16Array) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength)

/** Household prose: what a kitchen, a living room and a phone call sound like. */
const PROSE = [
  'Could you pass the salt and the pepper, please?',
  'I think the bus leaves at twenty past eight tomorrow morning.',
  'Did anyone remember to feed the cat before we left?',
  'The weather forecast says it will rain all weekend.',
  'We need milk, eggs, bread and some of those green apples.',
  'Turn the television down a little, the baby is asleep.',
  'My meeting was moved to Thursday afternoon at three.',
  'Have you seen my keys? I left them on the kitchen table.',
  'The plumber said he would come back on Monday to fix the sink.',
  'Let us watch the film after dinner, if you are not too tired.',
  'Grandma called and asked whether we are visiting at Easter.',
  'Put the dishes in the dishwasher and start it before bed.',
  'Is it my turn to take the rubbish out, or yours?',
  'The kids have a football match on Saturday at ten.',
  'I read that the new library opens next month in the square.',
  'Can you help me carry the shopping in from the car?',
  'The heating is too warm, let me open a window for a minute.',
  'Tell me about your day, how was school?',
  'We should book the train tickets before the prices go up.',
  'The soup needs more salt, and maybe a little lemon.',
  'Hello, yes, this is Anna speaking, who is calling please?',
  'I will be home late tonight, do not wait for me for dinner.',
  'The garden looks lovely since we planted the roses.',
  'Where did you put the charger for the tablet?',
  'Remind me to call the dentist in the morning.',
  'He scored twice in the second half, it was a great game.',
  'The news tonight was all about the election and the budget.',
  'Could you ask the neighbours to move their car a bit?',
  'This recipe needs two cups of flour and a spoon of sugar.',
  'Let us go for a walk along the river before it gets dark.',
  'The lights in the hall keep flickering, I think a bulb is going.',
  'Our holiday photos are finally printed and in the album.',
  'Please do your homework before you play any games.',
  'I could not find a parking space anywhere near the shop.',
  'She says the concert was wonderful and the band played for hours.',
  'The washing machine is making that strange noise again.',
  'Do you want tea or coffee? There is fresh coffee in the pot.',
  'The doctor said to rest for a few days and drink plenty of water.',
  'What time does the pharmacy close on Sundays?',
  'We are out of toothpaste, add it to the list.',
  'Jarred the peaches last summer and they are still good.',
  'Harvey and Mavis are coming round for drinks on Friday.',
  'Lexi left her jacket at the party, I will bring it tomorrow.',
  'The service at that restaurant was slow but the food was fine.',
  'Alex said the elections are next spring, not this autumn.',
  'My car needs a service, the brakes are squeaking.',
  'Hey, are you listening to me or reading your phone?',
  'Hey there, long time no see, how have you been?',
  'Travis fixed the fence and Marvin painted it green.',
  'A Lexus drove past with its alarm going off.',
]

/** Phrases that sound like the wake phrases without being them. */
export const NEAR_MISSES = [
  'hey travis',
  'hey marvin',
  'hey harvest',
  'hey davis',
  'hey jars',
  'hey service',
  'a jar of this',
  'hey jasmine',
  'hey charlie',
  'hey, par this',
  'alexis',
  'a lexus',
  'election',
  'elixir',
  'alex, sir',
  'a lecture',
  'hey mike',
  'hey, my craft',
  'hey, rascal',
  'what is the matter',
]

/** The near-misses of "hey jarvis" alone, and four more names close to it. */
export const NEAR_JARVIS = [
  ...NEAR_MISSES.filter((t) => t.startsWith('hey') || t.startsWith('a jar')),
  'hey jarvish',
  'hey jervis',
  'hey charvis',
  'hey garvey',
]

export const WAKE_PHRASES = [
  { head: 'hey_jarvis', text: 'hey jarvis' },
  { head: 'alexa', text: 'alexa' },
]

/**
 * What the speaker itself might say, holding the near-miss phrases and confusable names: its
 * replies, looped back into the capture, must not wake it.
 */
export const REPLIES = [
  'Travis called while you were out, he said the match starts at seven.',
  'I added a jar of honey and a jar of jam to the shopping list.',
  'Harvey and Mavis are on the calendar for Friday at eight.',
  'The Lexus service centre opens at nine tomorrow morning.',
  'The elections are on the fourth of May; polling stations open at seven.',
  'Alexis sent a message: she will be late for dinner.',
  'Hey, that is a good question. The bus leaves at twenty past eight.',
  'Marvin from next door asked whether you could water his plants.',
  'Here is a recipe for an elixir of lemon, honey and ginger.',
  'Jarred peaches keep for a year in a cool, dark cupboard.',
  'Your lecture on Thursday was moved to the main hall.',
  'Davis Street is closed for roadworks until the end of the month.',
  'The weather today is dry and bright, with a light breeze from the west.',
  'Jasmine tea is in the cupboard above the kettle, next to the coffee.',
  'Charlie said hello, and asked if you are free on Sunday.',
  'The harvest festival at the school is next Saturday afternoon.',
  'Hey there! Your timer for the pasta has finished.',
  'The rascal cat knocked a jar off the shelf again this morning.',
  'Mike from the garage called: your car is ready to collect.',
  'A lexicon is a list of words and what they mean.',
]

/** One utterance's place in a stream (samples), what it said and who said it. */
export interface Spoken {
  readonly from: number
  readonly to: number
  readonly text: string
  readonly voice: string
}

/**
 * The non-wake speech: household prose and the near-miss phrases read by every voice, 0.3–1 s
 * apart, as one stream; the same stream on every run (its utterances are cached).
 */
export function nonWakeStream(vs: readonly Voice[]): { stream: Int16Array; timeline: Spoken[] } {
  const pieces: Int16Array[] = []
  const timeline: Spoken[] = []
  let k = 0
  let at = 0
  for (const v of vs) {
    for (const [i, text] of [...PROSE, ...NEAR_MISSES].entries()) {
      const u = utterance(v, text, `neg-${v.name}-${i}`)
      const g = new Int16Array((16_000 * (300 + ((k++ * 137) % 700))) / 1000)
      timeline.push({ from: at, to: at + u.length, text, voice: v.name })
      at += u.length + g.length
      pieces.push(u, g)
    }
  }
  return { stream: concat(pieces), timeline }
}

/** Four streams of prose by eight espeak-ng voices, summed: a room of people talking. */
function babble(): Int16Array {
  const prose = voices().slice(0, 8)
  const parts = [0, 1, 2, 3].map((j) =>
    concat(
      PROSE.map((text, i) => {
        const v = prose[(i + j * 2) % prose.length] as Voice
        return utterance(v, text, `neg-${v.name}-${i}`)
      }),
    ),
  )
  const len = Math.min(...parts.map((b) => b.length))
  const out = new Int16Array(len)
  for (let i = 0; i < len; i++) {
    out[i] = Math.max(-32768, Math.min(32767, parts.reduce((s, b) => s + (b[i] ?? 0), 0) / 2))
  }
  return out
}

/** `noise` under the whole of `padded`, its level set against the phrase alone, as every wake-clip bench does. */
export function mixUnder(
  padded: Int16Array,
  phrase: Int16Array,
  noise: Int16Array,
  snrDb: number,
  offset: number,
): Int16Array {
  const ms = (x: Int16Array) => x.reduce((s, v) => s + v * v, 0) / Math.max(1, x.length)
  const gain = Math.sqrt(ms(phrase) / (ms(noise) * 10 ** (snrDb / 10)))
  return Int16Array.from(padded, (v, i) =>
    Math.max(
      -32768,
      Math.min(32767, Math.round(v + gain * (noise[(offset + i) % noise.length] ?? 0))),
    ),
  )
}

/** The wake clips' conditions: clean, then pink noise and babble at 20, 10 and 5 dB. */
export function noiseConditions(): [name: string, noise: Int16Array | undefined, snrDb: number][] {
  const pink = bed('pink', 60)
  const crowd = babble()
  return [
    ['clean', undefined, 0],
    ['pink 20 dB', pink, 20],
    ['pink 10 dB', pink, 10],
    ['pink 5 dB', pink, 5],
    ['babble 20 dB', crowd, 20],
    ['babble 10 dB', crowd, 10],
    ['babble 5 dB', crowd, 5],
  ]
}
