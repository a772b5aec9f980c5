// The companion head's training data (issue 46): "hey jarvis" said by the TUNING voices only
// (holdout.ts's tuningVoices: espeak-ng's 8 at 130/155/180 words a minute, flite kal, awb, rms,
// slt, kal16, festival kal; flite's and festival's also 0.9 and 1.1 as fast), followed at once by
// one of many commands (none the holdout's), alone, and after a pause; near-miss names in
// sentences of our own (none of holdout.ts's TV lines); ordinary prose (Debian's fortunes, from
// far down the list the holdout streams read from the top of); noise alone. Clean, and under our
// own pink noise and a babble of fortunes (not the bed and babble the holdout clips are mixed
// with) at 20, 10 and 5 dB. Every clip is scored once by the real detector scoring every chunk;
// what is kept is each clip's run of embeddings (the last row of each chunk's 16 × 96 window)
// and where the phrase ends, under var/bench-wake/companion (git-ignored), never in the repo.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { atSpeed } from '../../src/adapters/openwakeword/augment.js'
import { CHUNK_SAMPLES, EMBEDDING_SIZE } from '../../src/adapters/openwakeword/features.js'
import { HEADS, pinnedDetector } from '../../test/helpers/wake.js'
import { bytes, concat, mixUnder, pinkNoise, utterance, type Voice, voices } from './corpus.js'
import { Keeper } from './keeper.js'
import { fortuneTexts } from './prose.js'

const RATE = 16_000
const WINDOW = 16
export const COMPANION_CACHE = join(
  import.meta.dirname,
  '..',
  '..',
  'var',
  'bench-wake',
  'companion',
)

/** Said straight after the phrase in training: many, and none of holdout.ts's COMMANDS. */
export const TRAIN_COMMANDS = [
  'play some music',
  'what is the weather like today',
  'turn on the radio',
  'how tall is mount everest',
  'add milk to the shopping list',
  'call my mother',
  'stop',
  'pause the music',
  'what is on my calendar tomorrow',
  'dim the lights in the bedroom',
  'read me the news',
  'how many grams in a pound',
  'tell me a joke',
  'wake me up at seven',
  'open the garage door',
  'is it going to rain',
  'remind me to buy bread',
  'volume up',
  'who won the football last night',
  'lock the front door',
  'what song is this',
  'switch off the heating',
  'how do you spell necessary',
  'skip this track',
  'make the room warmer',
  'when does the shop close',
  'cancel my alarm',
  'translate good morning into french',
  'show me the doorbell camera',
  'good night',
]

/** Near-miss names, alone and run into speech, in sentences of our own (not holdout.ts's TV). */
export const TRAIN_NEAR = [
  'hey jars',
  'hey jarvish',
  'hey charvis',
  'hey jervis',
  'hey jarvie',
  'hey garvey',
  'jarvis',
  'hey travis',
  'hey marvin',
  'hey harvey',
  'hey davis',
  'hey jasmine',
  'hey service',
  'hey jars, can you pass me the milk',
  'hey jarvish, where did you put the keys',
  'hey charvis, the taxi is here',
  'hey jervis, what time is dinner',
  'hey jarvie, come and see the garden',
  'hey garvey, turn that music down',
  'jarvis, open the door for the guests',
  'mister jarvis will see you now',
  'we met jarvis at the station yesterday',
  'hey travis, set the table please',
  'hey marvin, play us a song',
  'harvey says the weather is lovely today',
  'hey davis, how was the match',
  'a jar of jam and a jar of honey',
  'hey there, what is for lunch',
  'hey, are you coming with us',
  'hey jasmine, call me when you get home',
  'travis and mavis are coming for tea',
  'the jarrah wood table is in the hall',
]

/** Fortunes the holdout streams never reach (they read from the top: 1159 texts in 120 min). */
export const FORTUNE_FROM = 3000

export interface TrainVoice extends Voice {
  /** The speed it was made at, for flite's and festival's tape-speed copies. */
  readonly speed: number
}

/** The tuning voices, each at its speeds. */
export function trainVoices(): TrainVoice[] {
  const out: TrainVoice[] = []
  for (const v of voices([130, 155, 180])) {
    if (v.name.startsWith('espeak')) out.push({ ...v, speed: 1 })
    else for (const s of [0.9, 1, 1.1]) out.push({ ...v, speed: s })
  }
  out.push(
    ...[0.9, 1, 1.1].map((speed) => ({
      name: 'flite-kal16',
      speed,
      say: (t: string, wav: string) => {
        execFileSync('flite', ['-voice', 'kal16', '-t', t, '-o', wav])
      },
    })),
  )
  return out
}

/** One utterance of a training voice, at its speed. */
export function said(v: TrainVoice, text: string): Int16Array {
  const key = `train-${v.name}-${text.replace(/[^a-z]+/g, '_').slice(0, 60)}`
  const u = utterance(v, text, key)
  if (v.speed === 1) return u
  const b = atSpeed(bytes(u), v.speed)
  return new Int16Array(b.buffer, b.byteOffset, b.byteLength >> 1)
}

/** A seeded generator (xorshift32), 0–1. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s / 2 ** 32
  }
}

/** A clip as kept: its embeddings (15 before its first chunk, then one per chunk) and labels. */
export interface Kept {
  readonly group: 'wake' | 'pause' | 'alone' | 'near' | 'prose' | 'noise' | 'command'
  readonly voice: string
  readonly noise: string
  /** Where the phrase ends, in chunks from the clip's start (fractional); none for negatives. */
  readonly phraseEnd?: number | undefined
  /** The pretrained head's score of each chunk. */
  readonly head: number[]
  readonly embeddings: Float32Array
}

/** Scores clips with the real detector (every chunk, no coarse scoring), keeping each window. */
export async function embedder(): Promise<{
  run: (pcm: Int16Array) => Promise<{ head: number[]; embeddings: Float32Array }>
  close: () => Promise<void>
}> {
  const head = HEADS.find((h) => h.name === 'hey_jarvis')
  const keeper = new Keeper(0)
  let scores: number[] = []
  let rows: Float32Array[] = []
  const d = await pinnedDetector({
    onWake: () => {},
    phrases: [{ phrase: 'hey jarvis', file: head?.file ?? '', threshold: 0.5, verifier: keeper }],
    consecutive: 2,
    onScores: (s) => {
      const w = keeper.pending
      keeper.pending = undefined
      if (!w) return
      if (rows.length === 0) {
        for (let r = 0; r < WINDOW - 1; r++)
          rows.push(w.slice(r * EMBEDDING_SIZE, (r + 1) * EMBEDDING_SIZE))
      }
      rows.push(w.slice((WINDOW - 1) * EMBEDDING_SIZE))
      scores.push(s[0] ?? 0)
    },
  })
  return {
    run: async (pcm) => {
      d.reset()
      await d.settled()
      scores = []
      rows = []
      await d.scoreRecorded(bytes(pcm), 0)
      const embeddings = new Float32Array(rows.length * EMBEDDING_SIZE)
      for (const [i, r] of rows.entries()) embeddings.set(r, i * EMBEDDING_SIZE)
      return { head: scores, embeddings }
    },
    close: () => d.close(),
  }
}

/** Four streams of fortunes (other texts than the negatives'), tuning voices, summed. */
export function trainBabble(): Int16Array {
  const texts = fortuneTexts().slice(FORTUNE_FROM + 2000, FORTUNE_FROM + 2080)
  const es = voices([155]).filter((v) => v.name.startsWith('espeak'))
  const parts = [0, 1, 2, 3].map((j) =>
    concat(
      texts.slice(j * 20, j * 20 + 20).map((t, i) => {
        const v = es[(i + j * 3) % es.length] as Voice
        return utterance(v, t.text, `train-babble-${v.name}-${t.key}`)
      }),
    ),
  )
  const len = Math.min(...parts.map((b) => b.length))
  return Int16Array.from({ length: len }, (_, i) =>
    Math.max(-32768, Math.min(32767, parts.reduce((s, b) => s + (b[i] ?? 0), 0) / 2)),
  )
}

const silence = (n: number) => new Int16Array(n)

/** Builds (or reads) the whole training set. */
export async function companionData(log: (s: string) => void): Promise<Kept[]> {
  mkdirSync(COMPANION_CACHE, { recursive: true })
  const file = join(COMPANION_CACHE, 'train.bin')
  const meta = join(COMPANION_CACHE, 'train.json')
  if (existsSync(file) && existsSync(meta)) return readKept(file, meta)
  const rnd = seeded(46)
  const pink = pinkNoise(60, 4646)
  const crowd = trainBabble()
  const noises: [string, Int16Array, number][] = [
    ['pink 20', pink, 20],
    ['pink 10', pink, 10],
    ['pink 5', pink, 5],
    ['babble 20', crowd, 20],
    ['babble 10', crowd, 10],
    ['babble 5', crowd, 5],
  ]
  const e = await embedder()
  const kept: Kept[] = []
  const vs = trainVoices()
  const prose = fortuneTexts().slice(FORTUNE_FROM, FORTUNE_FROM + 2000)
  let p = 0
  /** The clip placed (lead moved through a chunk), clean and under `copies` random noises. */
  const add = async (
    group: Kept['group'],
    voice: string,
    clip: Int16Array,
    copies: number,
    phraseEndInClip?: number,
  ) => {
    const lead = Math.round(RATE * (0.4 + rnd() * 0.6))
    const padded = concat([silence(lead), clip, silence(RATE * 0.8)])
    const phraseEnd =
      phraseEndInClip === undefined ? undefined : (lead + phraseEndInClip) / CHUNK_SAMPLES
    const conditions: [string, Int16Array | undefined, number][] = [['clean', undefined, 0]]
    for (let c = 0; c < copies; c++)
      conditions.push(noises[Math.floor(rnd() * noises.length)] as [string, Int16Array, number])
    for (const [name, noise, snr] of conditions) {
      const pcm = noise
        ? mixUnder(padded, clip, noise, snr, Math.floor(rnd() * noise.length))
        : padded
      const r = await e.run(pcm)
      kept.push({ group, voice, noise: name, phraseEnd, ...r })
    }
  }
  for (const v of vs) {
    const name = `${v.name}@${v.speed}`
    const alone = said(v, 'hey jarvis')
    await add('alone', name, alone, 2, alone.length)
    for (const [i, c] of TRAIN_COMMANDS.entries()) {
      // The phrase's end in the one-breath clip: where it ends said alone (a TTS voice says it
      // the same way; run on, its last phoneme may be a little shorter).
      await add('wake', name, said(v, `hey jarvis ${c}`), 2, alone.length)
      if (i % 6 === 0) {
        const gap = Math.round(RATE * (0.25 + rnd() * 0.5))
        await add('pause', name, concat([alone, silence(gap), said(v, c)]), 1, alone.length)
      }
    }
    for (const t of TRAIN_NEAR) await add('near', name, said(v, t), 1)
    for (let k = 0; k < 8; k++) {
      const t = prose[p++ % prose.length] as { key: string; text: string }
      try {
        await add('prose', name, said(v, t.text), k < 3 ? 1 : 0)
      } catch {
        // festival crashes on a few texts: left out.
      }
    }
    log(`  ${name}: ${kept.length} clips so far`)
  }
  for (const [name, noise] of [
    ['pink', pink],
    ['babble', crowd],
  ] as const) {
    const b = noise
    for (let s = 0; s + RATE * 10 <= b.length; s += RATE * 10) {
      const r = await e.run(b.subarray(s, s + RATE * 10))
      kept.push({ group: 'noise', voice: name, noise: name, ...r })
    }
  }
  await e.close()
  writeKept(kept, file, meta)
  return kept
}

export function writeKept(kept: Kept[], file: string, meta: string): void {
  const total = kept.reduce((n, k) => n + k.embeddings.length, 0)
  const all = new Float32Array(total)
  let at = 0
  for (const k of kept) {
    all.set(k.embeddings, at)
    at += k.embeddings.length
  }
  writeFileSync(file, new Uint8Array(all.buffer))
  writeFileSync(
    meta,
    JSON.stringify(kept.map(({ embeddings, ...m }) => ({ ...m, n: embeddings.length }))),
  )
}

export function readKept(file: string, meta: string): Kept[] {
  const b = readFileSync(file)
  const all = new Float32Array(b.buffer, b.byteOffset, b.byteLength >> 2)
  let at = 0
  return (
    JSON.parse(readFileSync(meta, 'utf8')) as (Omit<Kept, 'embeddings'> & { n: number })[]
  ).map(({ n, ...m }) => {
    const embeddings = all.slice(at, at + n)
    at += n
    return { ...m, embeddings }
  })
}
