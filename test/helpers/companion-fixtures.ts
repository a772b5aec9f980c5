// The fixture check companion.test.ts asks of the shipped companion, and rule `nearmiss` of every
// candidate before one is written anywhere (issue 46, branch `companion5`): the plain-speech
// fixtures (fixtures/vad) after 500–570 ms of silence, the chunks falling at eight places, through
// the real detector with the candidate as hey_jarvis's companion. One that wakes cannot ship.
import { join } from 'node:path'
import type { CompanionModel } from '../../src/adapters/openwakeword/companion.js'
import { COARSE_HOP } from '../../src/app/wake-detector.js'
import { FIXTURES, HEADS, pinnedDetector, silence, wavPcm } from './wake.js'

/** Where `companion` wakes on the fixtures ("clip at lead ms"); none is a pass. */
export async function fixtureWakes(companion: CompanionModel): Promise<string[]> {
  const head = HEADS.find((h) => h.name === 'hey_jarvis')
  const woke: string[] = []
  let clock = 0
  let clip = ''
  let lead = 0
  const d = await pinnedDetector({
    onWake: () => woke.push(`${clip} at ${lead} ms`),
    phrases: [{ phrase: 'hey_jarvis', file: head?.file ?? '', threshold: 0.5, companion }],
    coarseHop: COARSE_HOP,
  })
  try {
    for (const f of ['en-us-m', 'en-gb-f', 'en-us-f2', 'en-sc-m', 'soft', 'de-m']) {
      clip = f
      const pcm = wavPcm(join(FIXTURES, '..', 'vad', `speech-${f}.wav`))
      for (lead = 0; lead < 80; lead += 10) {
        d.reset()
        clock = await d.scoreRecorded(new Uint8Array([...silence(500 + lead), ...pcm]), clock)
        clock += 10_000
      }
    }
  } finally {
    await d.close()
  }
  return woke
}

/** The model as the shipped file would hold it: threshold `t` folded into the output bias. */
export function atThreshold(m: CompanionModel, t: number, gate: number): CompanionModel {
  return { ...m, gate, b2: m.b2 - Math.log(t / (1 - t)) }
}
