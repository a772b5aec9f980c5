import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { OpenWakeWordDetector } from '../../../src/adapters/openwakeword/detector.js'
import {
  type Clip,
  type Enrolment,
  enrol,
  WindowRecorder,
} from '../../../src/adapters/openwakeword/enrolment.js'
import {
  readVerifier,
  sha256File,
  verifierRecord,
  writeVerifier,
} from '../../../src/adapters/openwakeword/verifier.js'
import { isNocturnError } from '../../../src/core/errors.js'
import type { WakeDetection } from '../../../src/ports/wake-word.js'
import { missingCommands } from '../../helpers/system.js'
import { speakPcm } from '../../helpers/tts.js'
import { HEADS, pinnedDetector } from '../../helpers/wake.js'

const skip = missingCommands('espeak-ng', 'sox')
const JARVIS = HEADS.find((h) => h.name === 'hey_jarvis')?.file ?? ''
const ALEXA = HEADS.find((h) => h.name === 'alexa')?.file ?? ''
const dir = mkdtempSync(join(tmpdir(), 'nocturn-verifier-'))
const SECOND = 32_000

const say = (text: string, speed: number, pitch = 50) =>
  new Uint8Array(speakPcm(text, 'en-us', 16_000, { speed, pitch }))

/** `pcm` with `seconds` of silence either side. */
function padded(pcm: Uint8Array, seconds = 1): Uint8Array {
  const out = new Uint8Array(pcm.length + 2 * seconds * SECOND)
  out.set(pcm, seconds * SECOND)
  return out
}

async function detector(verifier?: string | WindowRecorder) {
  const wakes: WakeDetection[] = []
  const d = await pinnedDetector({
    onWake: (w) => wakes.push(w),
    phrases: [{ phrase: 'hey jarvis', file: JARVIS, threshold: 0.5, verifier }],
  })
  return { d, wakes, at: 0 }
}

/** Whether `pcm` (from a fresh start) wakes `d`. */
async function wakes(
  h: { d: OpenWakeWordDetector; wakes: WakeDetection[]; at: number },
  pcm: Uint8Array,
) {
  h.d.reset()
  h.wakes.length = 0
  // Capture time runs on between clips, as on a device, so one clip's refractory time has passed.
  h.at = (await h.d.scoreRecorded(padded(pcm, 2), h.at)) + 10_000
  return h.wakes.length > 0
}

/**
 * One voice's enrolment: the phrase at two speeds and two pitches, a sentence, "hey jars" twice
 * (marked as near-misses when `nearMiss`), and a few seconds of quiet room noise.
 */
function household(nearMiss: boolean): { positives: Clip[]; negatives: Clip[] } {
  const room = new Uint8Array(5 * SECOND)
  const v = new DataView(room.buffer)
  for (let i = 0; i < room.length; i += 2) v.setInt16(i, ((i * 7919) % 301) - 150, true)
  return {
    positives: [130, 170].flatMap((s) =>
      [40, 60].map((p) => ({ name: `${s}/${p}`, pcm: say('hey jarvis', s, p) })),
    ),
    negatives: [
      { name: 'sentence', pcm: say('The bins go out on Thursday, and the recycling too.', 160) },
      ...[150, 180].map((s) => ({ name: `near ${s}`, pcm: say('hey jars', s), nearMiss })),
      { name: 'room', pcm: room },
    ],
  }
}

describe('the verifier file', () => {
  const record = (over: Record<string, unknown> = {}) => ({
    ...verifierRecord({
      phrase: 'hey jarvis',
      head: JARVIS,
      headSha256: sha256File(JARVIS),
      window: 16,
      gate: 0.1,
      model: { weights: new Float64Array(16 * 96), bias: 0 },
      enrolment: {
        at: '2026-12-02T00:00:00.000Z',
        clips: 8,
        positiveWindows: 1,
        negativeWindows: 1,
        leaveOneOutAccepted: 8,
        negativesAccepted: 0,
        negativesChecked: 0,
      },
    }),
    ...over,
  })
  const refused = (name: string, content: string, head = JARVIS) => {
    const file = join(dir, name)
    writeFileSync(file, content)
    try {
      readVerifier(file, head, 16)
    } catch (err) {
      expect(isNocturnError(err) && err.code).toBe('NOC_ERR_WAKE_MODEL_INVALID')
      const text = (err as Error).message
      expect(text).toContain(file)
      expect(text).toContain('nocturn wake enroll')
      return text
    }
    throw new Error(`${name} was accepted`)
  }

  it('reads back what was written, and scores with it', () => {
    const file = join(dir, 'good.verifier.json')
    writeVerifier(file, record({ bias: 2 }))
    const v = readVerifier(file, JARVIS, 16)
    expect(v.gate).toBe(0.1)
    expect(v.score(new Float32Array(16 * 96))).toBeCloseTo(1 / (1 + Math.exp(-2)), 6)
  })

  it('refuses a file that is not JSON, not a verifier, the wrong size, or for another head', () => {
    expect(refused('a', '{ not json')).toMatch(/cannot be read/)
    expect(refused('b', JSON.stringify({ kind: 'something' }))).toMatch(/is not a verifier file/)
    expect(refused('c', JSON.stringify(record({ weights: [1, 2, 3] })))).toMatch(
      /holds 3 weights, not 1536/,
    )
    expect(refused('d', JSON.stringify(record({ window: 22 })))).toMatch(
      /trained on 22 embeddings, but the head reads 16/,
    )
    expect(refused('e', JSON.stringify(record()), ALEXA)).toMatch(/trained behind another head/)
  })
})

describe.skipIf(skip)('the household verifier on the real detector (espeak-ng clips)', () => {
  let enrolment: Enrolment
  const file = join(dir, 'hey_jarvis.verifier.json')
  let verified: Awaited<ReturnType<typeof detector>>
  let alone: Awaited<ReturnType<typeof detector>>

  beforeAll(async () => {
    // One voice enrols at two speeds and two pitches, reads a sentence, and gives near-misses it
    // has seen fire the speaker; the room is a few seconds of quiet noise.
    const recorder = new WindowRecorder()
    const enrolling = await detector(recorder)
    const { positives, negatives } = household(false)
    enrolment = await enrol(
      { detector: enrolling.d, recorder, threshold: 0.5, consecutive: 2, gate: 0.5 },
      positives,
      negatives,
    )
    await enrolling.d.close()
    writeVerifier(
      file,
      verifierRecord({
        phrase: 'hey jarvis',
        head: JARVIS,
        headSha256: sha256File(JARVIS),
        window: enrolment.window,
        gate: 0.5,
        model: enrolment.model,
        enrolment: { at: new Date().toISOString(), ...enrolment.summary },
      }),
    )
    verified = await detector(file)
    alone = await detector()
  }, 600_000)

  afterAll(async () => {
    await verified?.d.close()
    await alone?.d.close()
  })

  it('every enrolment clip is accepted by a verifier trained without it', () => {
    expect(enrolment.window).toBe(16)
    expect(enrolment.clips.map((c) => c.acceptedLeftOut)).toEqual([true, true, true, true])
  })

  it('accepts held-out clips of the same voice (other speeds, another pitch)', async () => {
    for (const s of [145, 160, 185]) {
      const pcm = say('hey jarvis', s, 50)
      expect(await wakes(alone, pcm), `head alone at ${s}`).toBe(true)
      expect(await wakes(verified, pcm), `with the verifier at ${s}`).toBe(true)
    }
  }, 120_000)

  it('rejects a near-miss the head alone fires on, said at a speed it was not enrolled with', async () => {
    // Speeds it was not enrolled with; the head alone fires on some of them (which depends on
    // where the chunks fall), and the verifier must stop every one it fires on.
    const firedAlone: number[] = []
    for (const s of [135, 140, 165, 175]) {
      const pcm = say('hey jars', s)
      if (!(await wakes(alone, pcm))) continue
      firedAlone.push(s)
      expect(await wakes(verified, pcm), `the verifier stops "hey jars" at ${s}`).toBe(false)
    }
    expect(firedAlone.length, 'the head alone fires on the near-miss').toBeGreaterThan(0)
  }, 120_000)
})

describe.skipIf(skip)('enrolment hears its near-misses at other speeds too', () => {
  const verifiers: Record<'as said' | 'at other speeds', string> = {
    'as said': join(dir, 'as-said.verifier.json'),
    'at other speeds': join(dir, 'other-speeds.verifier.json'),
  }

  beforeAll(async () => {
    // One household (en-us): four clips, a sentence, "hey jars" twice and the room, enrolled
    // twice from the same recordings, with and without the near-misses' slowed and hurried
    // copies (the cut-short clips get them too).
    const recorder = new WindowRecorder()
    const enrolling = await detector(recorder)
    const { positives, negatives } = household(true)
    // At other speeds is the default; none at all is what enrolment did before.
    for (const [how, speeds] of [
      ['as said', []],
      ['at other speeds', undefined],
    ] as const) {
      const e = await enrol(
        {
          detector: enrolling.d,
          recorder,
          threshold: 0.5,
          consecutive: 2,
          gate: 0.5,
          ...(speeds && { negativeSpeeds: speeds }),
        },
        positives,
        negatives,
      )
      writeVerifier(
        verifiers[how],
        verifierRecord({
          phrase: 'hey jarvis',
          head: JARVIS,
          headSha256: sha256File(JARVIS),
          window: e.window,
          gate: 0.5,
          model: e.model,
          enrolment: { at: new Date().toISOString(), ...e.summary },
        }),
      )
    }
    await enrolling.d.close()
  }, 600_000)

  it("turns away more of its guests' near-misses, and still hears the household", async () => {
    const asSaid = await detector(verifiers['as said'])
    const otherSpeeds = await detector(verifiers['at other speeds'])
    try {
      // Near-misses it never enrolled, in three other voices: which each verifier lets wake it.
      const accepted = { asSaid: [] as string[], otherSpeeds: [] as string[] }
      for (const voice of ['en-gb', 'en-us+f3', 'en-gb-x-rp']) {
        for (const text of ['hey charlie', 'hey jasmine']) {
          for (const speed of [135, 145, 160, 175]) {
            const pcm = new Uint8Array(speakPcm(text, voice, 16_000, { speed }))
            const name = `${voice} "${text}" ${speed}`
            if (await wakes(asSaid, pcm)) accepted.asSaid.push(name)
            if (await wakes(otherSpeeds, pcm)) accepted.otherSpeeds.push(name)
          }
        }
      }
      // Measured: 8 of 24 as said, 2 with the copies, both among the 8.
      expect(accepted.otherSpeeds.length).toBeLessThan(accepted.asSaid.length / 2)
      for (const n of accepted.otherSpeeds) expect(accepted.asSaid).toContain(n)
      for (const s of [145, 160, 185]) {
        expect(await wakes(otherSpeeds, say('hey jarvis', s)), `the phrase at ${s}`).toBe(true)
      }
    } finally {
      await asSaid.d.close()
      await otherSpeeds.d.close()
    }
  }, 240_000)
})
