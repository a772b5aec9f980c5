/**
 * The names a wake phrase is confused with, made from its phones alone (CMU's 39-phone set, as
 * pocketsphinx's dictionary spells them), so any phrase gets its own: "hey jarvis" (HH EY JH AA R
 * V AH S) gives "hey charvis", "hey garvey"-like onsets (JH → CH, ZH, D, G), "hey jarvish" (S →
 * SH), "hey jervis" (AA R → ER), "hey jars" and "hey jarvie" (the word cut after its first vowel
 * and R, then S/Z or a consonant and IY), "hey jarvi" (its last consonant dropped). Nothing in it
 * is tuned to a stream; which edits count was chosen on the tuning voices (bench/RESULTS.md,
 * "competitors"): names differ from each other in their consonants at the word's edges, and in
 * being cut short, while the inside of a word and its vowels are where one speaker's way of saying
 * it differs from another's — swapped there, the "competitor" beat the phrase on its own wakes
 * (V → F, AA → AH, "hey" → "heh"), so those are left out.
 */

/** Consonants heard as each other: place or voicing apart. */
const CLOSE: Readonly<Record<string, readonly string[]>> = {
  P: ['B', 'T', 'K'],
  B: ['P', 'D', 'V'],
  T: ['D', 'P', 'K', 'CH'],
  D: ['T', 'B', 'G', 'JH'],
  K: ['G', 'T', 'P'],
  G: ['K', 'D', 'JH'],
  F: ['V', 'TH', 'S'],
  V: ['F', 'B', 'DH', 'W'],
  TH: ['F', 'DH', 'S'],
  DH: ['TH', 'V', 'D', 'Z'],
  S: ['Z', 'SH', 'TH'],
  Z: ['S', 'ZH', 'DH'],
  SH: ['S', 'ZH', 'CH'],
  ZH: ['Z', 'SH', 'JH'],
  CH: ['JH', 'SH', 'T'],
  JH: ['CH', 'ZH', 'D', 'G'],
  M: ['N'],
  N: ['M', 'NG'],
  NG: ['N'],
  L: ['R', 'W'],
  R: ['L', 'W'],
  W: ['V', 'R'],
  Y: ['JH'],
}
const VOWELS = new Set([
  'AA',
  'AE',
  'AH',
  'AO',
  'AW',
  'AY',
  'EH',
  'ER',
  'EY',
  'IH',
  'IY',
  'OW',
  'OY',
  'UH',
  'UW',
])
/** A vowel and R said as one (r-coloured): "jarvis" → "jervis". */
const R_VOWEL = new Set(['AA', 'AO', 'EH', 'AH'])

/** One word's near-miss spellings (phones), the word itself never among them. */
function wordVariants(ph: readonly string[]): string[][] {
  const out: string[][] = []
  const last = ph.length - 1
  // Its first or last consonant swapped for a close one.
  for (const i of new Set([0, last])) {
    for (const q of CLOSE[ph[i] as string] ?? [])
      out.push([...ph.slice(0, i), q, ...ph.slice(i + 1)])
  }
  // Its last consonant dropped ("hey jarvi"), where another is left.
  if (!VOWELS.has(ph[last] as string) && ph.filter((x) => !VOWELS.has(x)).length > 1)
    out.push(ph.slice(0, last))
  // A vowel and R said as one.
  for (const [i, p] of ph.entries()) {
    if (R_VOWEL.has(p) && ph[i + 1] === 'R') out.push([...ph.slice(0, i), 'ER', ...ph.slice(i + 2)])
  }
  // Cut after its first vowel (and an R after it), then S or Z ("jars"), or the next consonant and
  // IY ("jarvie").
  const v = ph.findIndex((p) => VOWELS.has(p))
  const cut = ph[v + 1] === 'R' ? v + 2 : v + 1
  if (v >= 0 && cut < last) {
    const stem = ph.slice(0, cut)
    out.push([...stem, 'Z'], [...stem, 'S'])
    const next = ph[cut] as string
    if (!VOWELS.has(next)) out.push([...stem, next, 'IY'])
  }
  return out
}

/**
 * The competitors of a phrase: each a list of words' phones, the phrase with one word made a
 * near-miss of itself. `pronunciations` holds each word's pronunciations (the dictionary's
 * variants); none of the phrase's own spellings is returned.
 */
export function competitorsOf(pronunciations: readonly (readonly string[][])[]): string[][][] {
  const own = new Set<string>()
  const combos = pronunciations.reduce<string[][][]>(
    (acc, prons) => acc.flatMap((c) => prons.map((p) => [...c, p])),
    [[]],
  )
  for (const c of combos) own.add(c.map((w) => w.join(' ')).join(' | '))
  const seen = new Set<string>()
  const out: string[][][] = []
  for (const c of combos) {
    for (const [i, word] of c.entries()) {
      for (const v of wordVariants(word)) {
        const comp = [...c.slice(0, i), v, ...c.slice(i + 1)]
        const key = comp.map((w) => w.join(' ')).join(' | ')
        if (own.has(key) || seen.has(key)) continue
        seen.add(key)
        out.push(comp)
      }
    }
  }
  return out
}
