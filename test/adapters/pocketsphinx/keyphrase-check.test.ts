import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  DEBIAN_MODEL_DIR,
  DEFAULT_MARGIN,
  DEFAULT_THRESHOLD,
  KeyphraseCheck,
} from '../../../src/adapters/pocketsphinx/keyphrase-check.js'
import { missingCommands, systemSkip } from '../../helpers/system.js'
import { FIXTURES, wavPcm } from '../../helpers/wake.js'

const MODEL = join(DEBIAN_MODEL_DIR, 'en-us', 'mdef')
const skip =
  missingCommands('pocketsphinx_continuous') ??
  (existsSync(MODEL) ? undefined : systemSkip([MODEL]))

/**
 * The local second opinion on Debian's pocketsphinx, on the committed clips of flite's kal16
 * voice (scripts/make-wake-fixtures.sh): "hey jarvis", and "hey jarvish", a near-miss that makes
 * the hey_jarvis head fire (0.998); flite rms's "hey jarvish" fires it too, and the phrase alone
 * lets it through where the phrase weighed against its competitors refuses it. espeak-ng's "hey jarvis" (the head's own fixture) is one
 * pocketsphinx does not hear as the phrase: formant speech is far from the people it learnt from.
 */
describe.skipIf(skip)('the local wake check (pocketsphinx keyphrase spotting)', () => {
  const checks: KeyphraseCheck[] = []
  const make = (phrases: string[], threshold = 1e-12) => {
    const c = KeyphraseCheck.create({ phrases, threshold })
    checks.push(c)
    return c
  }
  afterAll(async () => {
    for (const c of checks) await c.close()
  })

  it('agrees on the wake phrase and refuses a near-miss the head fired on', async () => {
    const check = make(['hey jarvis', 'alexa'])
    const wake = await check.check(wavPcm(join(FIXTURES, 'hey_jarvis-kal16.wav')))
    expect([wake.agreed, wake.heard]).toEqual([true, ['hey jarvis']])
    const near = await check.check(wavPcm(join(FIXTURES, 'near-miss-hey_jarvish-kal16.wav')))
    expect([near.agreed, near.heard]).toEqual([false, []])
    // Silence is no phrase either.
    expect((await check.check(new Uint8Array(32_000))).agreed).toBe(false)
  })

  it('weighed against its competitors, a near-miss the phrase alone lets through is refused; the phrase still agrees', async () => {
    // flite rms's "hey jarvish" fires the head and the phrase alone at 1e-12 hears "hey jarvis" in it.
    const jarvishRms = wavPcm(join(FIXTURES, 'near-miss-hey_jarvish-rms.wav'))
    expect((await make(['hey jarvis']).check(jarvishRms)).agreed).toBe(true)
    const weighed = KeyphraseCheck.create({
      phrases: ['hey jarvis'],
      threshold: DEFAULT_THRESHOLD.weighed,
      competitors: { margin: DEFAULT_MARGIN },
    })
    checks.push(weighed)
    expect(await weighed.check(jarvishRms)).toMatchObject({ agreed: false, heard: [] })
    // "hey jarvish" itself beat it over the same stretch.
    const { spotted } = await weighed.spot(jarvishRms)
    const best = spotted.reduce((a, b) => (b.perFrame > a.perFrame ? b : a))
    expect(best.key).toBe('hh_ey jh_aa_r_v_ih_sh')
    const wake = await weighed.check(wavPcm(join(FIXTURES, 'hey_jarvis-kal16.wav')))
    expect([wake.agreed, wake.heard]).toEqual([true, ['hey jarvis']])
    const jarvishKal16 = wavPcm(join(FIXTURES, 'near-miss-hey_jarvish-kal16.wav'))
    expect((await weighed.check(jarvishKal16)).agreed).toBe(false)
    expect((await weighed.check(new Uint8Array(32_000))).agreed).toBe(false)
  })

  it('a phrase whose word its dictionary lacks is refused at once, naming the phrase and the word', () => {
    expect(() => make(['hey jarvis', 'hey rhasspy'])).toThrow(
      /cannot spot "hey rhasspy": its dictionary \(.*cmudict-en-us\.dict\) has no "rhasspy"; .*listen\.localCheck\.enabled/,
    )
    expect(() => make(['hey jarvis'], 2)).toThrow(/threshold must be between 0 and 1.*got 2/)
    // Capitals and punctuation are not words: "What's the weather?" is spelt as the dictionary does.
    expect(() => make(["What's the weather?"])).not.toThrow()
  })

  it("the dictionary it loads holds every pronunciation of the phrases' words, and no other word", () => {
    // Read here the plain way, line by line: what the check finds in the file's bytes must agree.
    const full = readFileSync(join(DEBIAN_MODEL_DIR, 'cmudict-en-us.dict'), 'latin1').split('\n')
    const linesOf = (w: string) =>
      full.filter((l) => l.startsWith(`${w} `) || l.startsWith(`${w}(`))
    // "hey" begins 23 other words ("heyday"…); "'bout" is the file's first line; "the" has two.
    const check = make(['hey jarvis', "'bout the weather"])
    const dict = check.args[check.args.indexOf('-dict') + 1] as string
    const loaded = readFileSync(dict, 'latin1').trim().split('\n').sort()
    const want = ['hey', 'jarvis', "'bout", 'the', 'weather'].flatMap(linesOf).sort()
    expect(want.length).toBeGreaterThanOrEqual(6)
    expect(loaded).toEqual(want)
  })

  it('a recogniser that cannot run rejects with why; its files are gone after close', async () => {
    const before = readdirSync('/dev/shm').concat(readdirSync(tmpdir()))
    const broken = KeyphraseCheck.create({
      phrases: ['hey jarvis'],
      threshold: 1e-12,
      program: '/nonexistent/pocketsphinx_continuous',
    })
    await expect(broken.check(new Uint8Array(3200))).rejects.toThrow(/could not run: .*ENOENT/)
    const wrongModel = KeyphraseCheck.create({
      phrases: ['hey jarvis'],
      threshold: 1e-12,
      program: 'false',
    })
    await expect(wrongModel.check(new Uint8Array(3200))).rejects.toThrow(/exited with 1/)
    await broken.close()
    await wrongModel.close()
    const after = readdirSync('/dev/shm').concat(readdirSync(tmpdir()))
    expect(after.filter((f) => f.startsWith('nocturn-kws-') && !before.includes(f))).toEqual([])
  })
})
