import { describe, expect, it } from 'vitest'
import { competitorsOf } from '../../../src/adapters/pocketsphinx/competitors.js'
import { parseSpotted, winners } from '../../../src/adapters/pocketsphinx/spotted.js'

const spelt = (cs: string[][][]) => cs.map((c) => c.map((w) => w.join(' ')).join(' | '))

describe("a phrase's competitors, from its phones alone", () => {
  it('"hey jarvis" gives the names the television says, and never the phrase itself', () => {
    const hey = [['HH', 'EY']]
    const jarvis = [
      ['JH', 'AA', 'R', 'V', 'AH', 'S'],
      ['JH', 'AA', 'R', 'V', 'IH', 'S'],
    ]
    const all = spelt(competitorsOf([hey, jarvis]))
    expect(all).toEqual(
      expect.arrayContaining([
        'HH EY | CH AA R V AH S', // charvis
        'HH EY | G AA R V IH S', // garvis
        'HH EY | JH AA R V IH SH', // jarvish
        'HH EY | JH ER V IH S', // jervis
        'HH EY | JH AA R Z', // jars
        'HH EY | JH AA R V IY', // jarvie
      ]),
    )
    expect(all).not.toContain('HH EY | JH AA R V AH S')
    expect(all).not.toContain('HH EY | JH AA R V IH S')
    // Inside the word and its vowels is how speakers differ, not names: none of those.
    expect(all).not.toContain('HH EY | JH AA R F AH S')
    expect(all.some((c) => c.startsWith('HH EH'))).toBe(false)
    expect(new Set(all).size).toBe(all.length)
  })

  it('another phrase gets its own', () => {
    // "computer": its first and last consonants swapped, cut short ("comp", "compie").
    const all = spelt(competitorsOf([[['K', 'AH', 'M', 'P', 'Y', 'UW', 'T', 'ER']]]))
    expect(all).toEqual(expect.arrayContaining(['G AH M P Y UW T ER', 'K AH Z', 'K AH M IY']))
  })
})

describe("pocketsphinx's spotted keyphrases, weighed", () => {
  const out = [
    'hh_ey jh_aa_r_v_ah_s  hh_ey ch_aa_r_v_ah_s ',
    'hh_ey jh_aa_r_v_ah_s  0.400 1.090 0.846183',
    'hh_ey ch_aa_r_v_ah_s  0.400 1.090 0.871346',
    'hh_ey jh_aa_r_z  2.000 2.500 0.999999',
  ].join('\n')
  const phraseOf = new Map([['hh_ey jh_aa_r_v_ah_s', 'hey jarvis']])

  it('reads each line: where, and the log confidence per frame', () => {
    const s = parseSpotted(out)
    expect(s.map((x) => [x.key, x.fromS, x.toS])).toEqual([
      ['hh_ey jh_aa_r_v_ah_s', 0.4, 1.09],
      ['hh_ey ch_aa_r_v_ah_s', 0.4, 1.09],
      ['hh_ey jh_aa_r_z', 2, 2.5],
    ])
    expect(s[0]?.perFrame).toBeCloseTo(Math.log(0.846183) / 69, 9)
  })

  it('the phrase wins only where no competitor over the same stretch beats it by more than the margin', () => {
    const s = parseSpotted(out)
    expect(winners(s, phraseOf, undefined)).toEqual(['hey jarvis'])
    // "hey charvis" over the same stretch scores higher: refused.
    expect(winners(s, phraseOf, 0)).toEqual([])
    // … unless the margin allows it; a competitor elsewhere ("hey jars" at 2 s) never counts.
    expect(winners(s, phraseOf, 1e-3)).toEqual(['hey jarvis'])
    expect(
      winners(
        s.filter((x) => x.key !== 'hh_ey ch_aa_r_v_ah_s'),
        phraseOf,
        0,
      ),
    ).toEqual(['hey jarvis'])
  })
})
