import { spawn } from 'node:child_process'
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import type { PhraseCheck, PhraseVerdict } from '../../ports/phrase-check.js'
import { competitorsOf } from './competitors.js'
import { parseSpotted, type Spotted, winners } from './spotted.js'

/** Debian's pocketsphinx-en-us: the US English acoustic model and its dictionary. */
export const DEBIAN_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us'
/** Debian's pocketsphinx: the program that spots keyphrases in a file (or stdin). */
const PROGRAM = 'pocketsphinx_continuous'
/** A check that has not answered by then has hung; a board under a 10 % quota answers in ~1 s. */
const DEFAULT_TIMEOUT_MS = 5000
/** A competitor is spotted from this keyphrase threshold up: any of them near the phrase is. */
const COMPETITOR_THRESHOLD = 1e-40
/**
 * The phrase's threshold unless configured, weighed against its competitors or alone, and the
 * competitors' margin: chosen on the tuning voices (bench/RESULTS.md, "the local check weighed
 * against the names it is confused with"; 1e-4 let the fewest near-misses through there).
 */
export const DEFAULT_THRESHOLD = { weighed: 1e-30, alone: 1e-12 } as const
export const DEFAULT_MARGIN = 1e-4

export interface KeyphraseCheckOptions {
  /** The wake phrases, as said ("hey jarvis"): any one spotted agrees. */
  readonly phrases: readonly string[]
  /**
   * pocketsphinx's keyphrase threshold (`-kws_threshold`): smaller lets more through. 1e-12 took
   * every wake and refused most near-misses on the bench's voices (bench/RESULTS.md).
   */
  readonly threshold: number
  /**
   * Weigh the phrase against the names it is confused with (competitors.ts): spotted beside it, at
   * `COMPETITOR_THRESHOLD`, the phrase agrees only where no competitor over the same stretch
   * scores more than `margin` above it, per frame (natural log of pocketsphinx's confidence).
   * Unset: the phrase against its threshold alone.
   */
  readonly competitors?: { readonly margin: number }
  /** Holds `en-us/` (the acoustic model) and `cmudict-en-us.dict`. */
  readonly modelDir?: string
  readonly program?: string
  readonly timeoutMs?: number
}

/**
 * Why the check cannot run here, or undefined: the program is not on PATH (Debian's package
 * `pocketsphinx`). The model is looked for by `KeyphraseCheck.create`.
 */
export function programMissing(program = PROGRAM): string | undefined {
  const found = (process.env.PATH ?? '').split(delimiter).some((dir) => {
    if (dir === '') return false
    try {
      accessSync(join(dir, program), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
  return found
    ? undefined
    : `the local wake check needs ${program} (Debian: apt-get install pocketsphinx pocketsphinx-en-us)`
}

/** Where the audio of a check is written: a tmpfs when there is one, so no card is worn by it. */
function memoryFolder(): string {
  try {
    accessSync('/dev/shm', constants.W_OK)
    return '/dev/shm'
  } catch {
    return tmpdir()
  }
}

/** The words of a phrase as the dictionary spells them: lower case, letters and apostrophes. */
function words(phrase: string): string[] {
  return phrase
    .toLowerCase()
    .replace(/[^a-z' ]+/g, ' ')
    .split(' ')
    .filter((w) => w !== '')
}

/**
 * The local second opinion, on Debian's pocketsphinx: its keyword spotting (`-kws`) with the US
 * English acoustic model, trained on recordings of people. One process per check, on the
 * pre-roll written to a file in a tmpfs: measured, loading the model costs less than a kept
 * process would save, and a process that has finished says plainly that it heard nothing
 * (docs/wake-word.md, "The local second opinion"). The dictionary it loads is cut down to the
 * phrases' words, written once into a private folder: the whole one takes 3× as long to load.
 */
export class KeyphraseCheck implements PhraseCheck {
  readonly #o: KeyphraseCheckOptions
  readonly #dir: string
  readonly #args: readonly string[]
  readonly #phraseOf: ReadonlyMap<string, string>
  #checks = 0

  private constructor(
    o: KeyphraseCheckOptions,
    dir: string,
    args: string[],
    phraseOf: ReadonlyMap<string, string>,
  ) {
    this.#o = o
    this.#dir = dir
    this.#args = args
    this.#phraseOf = phraseOf
  }

  /**
   * Checks every phrase against the dictionary and writes the keyphrase list. Throws an error
   * naming the phrase and its words when the dictionary lacks one (pocketsphinx would otherwise
   * spot nothing, silently), and when the model is not installed.
   */
  static create(o: KeyphraseCheckOptions): KeyphraseCheck {
    const modelDir = o.modelDir ?? DEBIAN_MODEL_DIR
    if (!(o.threshold > 0 && o.threshold < 1)) {
      throw new Error(
        `the local check's threshold must be between 0 and 1 (e.g. 1e-15), got ${o.threshold}`,
      )
    }
    const dictFile = join(modelDir, 'cmudict-en-us.dict')
    let dict: Buffer
    try {
      dict = readFileSync(dictFile)
    } catch {
      throw new Error(
        `the local wake check needs ${dictFile} (Debian: apt-get install pocketsphinx pocketsphinx-en-us), or listen.localCheck.enabled false`,
      )
    }
    const phrases = o.phrases.map((p) => words(p).join(' '))
    const entries = entriesOf(dict, new Set(phrases.flatMap(words)))
    const needed = new Set<string>()
    for (const [i, p] of phrases.entries()) {
      const missing = words(p).filter((w) => !entries.has(w))
      if (missing.length > 0 || p === '') {
        throw new Error(
          `the local wake check cannot spot "${o.phrases[i]}": ${missing.length > 0 ? `its dictionary (${dictFile}) has no ${missing.map((w) => `"${w}"`).join(', ')}` : 'it has no words'}; listen for another phrase, or set listen.localCheck.enabled to false`,
        )
      }
      for (const w of words(p)) needed.add(w)
    }
    const dir = mkdtempSync(join(memoryFolder(), 'nocturn-kws-'))
    const small = join(dir, 'phrases.dict')
    const kws = join(dir, 'phrases.kws')
    const list = o.competitors
      ? rivalList(phrases, entries, o.threshold)
      : {
          dict: [...needed].flatMap((w) => entries.get(w) ?? []),
          kws: phrases.map((p) => `${p} /${o.threshold.toExponential()}/`),
          phraseOf: new Map(phrases.map((p) => [p, p])),
        }
    writeFileSync(small, `${list.dict.join('\n')}\n`)
    writeFileSync(kws, `${list.kws.join('\n')}\n`)
    const args = [
      '-hmm',
      join(modelDir, 'en-us'),
      '-dict',
      small,
      '-kws',
      kws,
      // Every frame to the search, not only those its voice detector calls speech: with it on, how
      // long the room was quiet before the phrase changed the verdict (bench/RESULTS.md).
      '-remove_silence',
      'no',
      // Each keyphrase spotted on a line of its own, with where and how sure (spotted.ts).
      '-time',
      'yes',
      '-logfn',
      '/dev/null',
    ]
    return new KeyphraseCheck(o, dir, args, list.phraseOf)
  }

  async check(pcm: Uint8Array): Promise<PhraseVerdict> {
    const { spotted, ms } = await this.spot(pcm)
    const heard = winners(spotted, this.#phraseOf, this.#o.competitors?.margin)
    return { agreed: heard.length > 0, heard, ms }
  }

  /** The program's arguments but its input: what the benches time. */
  get args(): readonly string[] {
    return this.#args
  }

  /** Which keyphrase of the list spells which phrase (the rest are competitors). */
  get phraseOf(): ReadonlyMap<string, string> {
    return this.#phraseOf
  }

  /** Every keyphrase pocketsphinx spotted in the audio, phrase or competitor: where, how sure. */
  spot(pcm: Uint8Array): Promise<{ spotted: Spotted[]; ms: number }> {
    const t0 = performance.now()
    // Raw samples in a file (a name ending in .wav would want a header): the program reads its
    // input with fopen, and Node's stdin pipe is a socket that /dev/stdin cannot open.
    const infile = join(this.#dir, `${++this.#checks}.raw`)
    writeFileSync(infile, pcm)
    const limit = this.#o.timeoutMs ?? DEFAULT_TIMEOUT_MS
    return new Promise<{ spotted: Spotted[]; ms: number }>((resolve, reject) => {
      const child = spawn(this.#o.program ?? PROGRAM, [...this.#args, '-infile', infile], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let out = ''
      let err = ''
      const timer = setTimeout(() => {
        child.kill('SIGKILL')
        reject(new Error(`${PROGRAM} gave no answer within ${limit} ms`))
      }, limit)
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString()
      })
      child.stderr.on('data', (d: Buffer) => {
        err = (err + d.toString()).slice(-400)
      })
      child.on('error', (e) => {
        clearTimeout(timer)
        reject(new Error(`${PROGRAM} could not run: ${e.message}`))
      })
      child.on('close', (code) => {
        clearTimeout(timer)
        if (code !== 0) {
          reject(
            new Error(`${PROGRAM} exited with ${code}: ${err.trim().split('\n').at(-1) ?? ''}`),
          )
          return
        }
        resolve({ spotted: parseSpotted(out), ms: performance.now() - t0 })
      })
    }).finally(() => rmSync(infile, { force: true }))
  }

  async close(): Promise<void> {
    rmSync(this.#dir, { recursive: true, force: true })
  }
}

/**
 * The dictionary's lines for `wanted` words only, each word's pronunciations in file order
 * ("word", "word(2)"…). Looked up in the file's bytes, not decoded and split into its 135 000
 * lines: a start that made a map of every word held ~60 MB more for good and was running ~0.5 s
 * later (bench/RESULTS.md, "what `auto` cost every start").
 */
function entriesOf(dict: Buffer, wanted: ReadonlySet<string>): Map<string, string[]> {
  const entries = new Map<string, string[]>()
  for (const w of wanted) {
    const head = Buffer.from(`\n${w}`, 'latin1')
    // Where a line begins with it: the file's first line has no newline before it.
    const starts = dict.subarray(0, w.length).equals(head.subarray(1)) ? [0] : []
    for (let at = dict.indexOf(head); at >= 0; at = dict.indexOf(head, at + 1)) starts.push(at + 1)
    const lines: string[] = []
    for (const start of starts) {
      // The word itself, not one it begins ("hey" in "heyday"): a space, a tab or "(2)" follows.
      const next = dict[start + w.length]
      if (next !== 0x20 && next !== 0x09 && next !== 0x28) continue
      const end = dict.indexOf(0x0a, start)
      lines.push(dict.toString('latin1', start, end < 0 ? dict.length : end))
    }
    if (lines.length > 0) entries.set(w, lines)
  }
  return entries
}

/**
 * The keyphrase list with competitors: every word a made-up dictionary entry named by its phones
 * (a near-miss has no word of its own), each phrase once per pronunciation its words have, at the
 * phrase's threshold, and each competitor at `COMPETITOR_THRESHOLD`, low enough that any of them
 * near the phrase is spotted and can be weighed against it.
 */
function rivalList(
  phrases: readonly string[],
  entries: ReadonlyMap<string, string[]>,
  threshold: number,
): { dict: string[]; kws: string[]; phraseOf: Map<string, string> } {
  // Named by their phones ("jh_aa_r_z"): what was spotted says what it was.
  const names = new Map<string, string>()
  const spell = (ph: readonly string[]) => {
    const name = ph.join('_').toLowerCase()
    names.set(ph.join(' '), name)
    return name
  }
  const kws: string[] = []
  const phraseOf = new Map<string, string>()
  const rivals = new Set<string>()
  for (const p of phrases) {
    const prons = words(p).map((w) =>
      (entries.get(w) ?? []).map((line) => line.trim().split(/\s+/).slice(1)),
    )
    const combos = prons.reduce<string[][][]>(
      (acc, ws) => acc.flatMap((c) => ws.map((ph) => [...c, ph])),
      [[]],
    )
    for (const c of combos) {
      const key = c.map(spell).join(' ')
      if (phraseOf.has(key)) continue
      phraseOf.set(key, p)
      kws.push(`${key} /${threshold.toExponential()}/`)
    }
    for (const c of competitorsOf(prons)) rivals.add(c.map(spell).join(' '))
  }
  for (const r of rivals) {
    if (!phraseOf.has(r)) kws.push(`${r} /${COMPETITOR_THRESHOLD.toExponential()}/`)
  }
  return { dict: [...names].map(([ph, name]) => `${name} ${ph}`), kws, phraseOf }
}
