import { copyFileSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { atSpeed } from '../../src/adapters/openwakeword/augment.js'
import { enrol, WindowRecorder } from '../../src/adapters/openwakeword/enrolment.js'
import { verifierFileFor } from '../../src/adapters/openwakeword/model-files.js'
import {
  sha256File,
  verifierRecord,
  writeVerifier,
} from '../../src/adapters/openwakeword/verifier.js'
import { parseWav } from '../../src/audio/wav.js'
import { EMBEDDING, FIXTURES, MEL, MODEL_DIR, pinnedDetector, wavPcm } from './wake.js'

const ROOT = join(import.meta.dirname, '../..')
const HEAD = 'hey_jarvis_v0.1.onnx'

/**
 * A household enrolled behind hey_jarvis in `dir` (the feature models and the head copied in):
 * flite's kal16 voice saying "hey jarvis" at four speeds, the VAD fixtures' speech and a quiet
 * room as negatives — and no near-miss, so "hey jarvish" in the same voice still wakes it. What
 * `nocturn wake enroll` writes, made in a few seconds. Returns the model dir.
 */
export async function enrolledHousehold(dir: string): Promise<string> {
  const models = join(dir, 'models')
  mkdirSync(models, { recursive: true })
  for (const f of [MEL, EMBEDDING, join(MODEL_DIR, HEAD)]) {
    copyFileSync(f, join(models, f.split('/').at(-1) ?? ''))
  }
  const head = join(models, HEAD)
  const recorder = new WindowRecorder()
  const d = await pinnedDetector({
    onWake: () => {},
    phrases: [{ phrase: 'hey jarvis', file: head, threshold: 0.5, verifier: recorder }],
  })
  const phrase = wavPcm(join(FIXTURES, 'hey_jarvis-kal16.wav'))
  const speech = (f: string) =>
    new Uint8Array(parseWav(readFileSync(join(ROOT, 'fixtures/vad', f)), 16_000).pcm)
  const room = new Uint8Array(5 * 32_000)
  const v = new DataView(room.buffer)
  for (let i = 0; i < room.length; i += 2) v.setInt16(i, ((i * 7919) % 301) - 150, true)
  try {
    const e = await enrol(
      { detector: d, recorder, threshold: 0.5, consecutive: 2, gate: 0.3, negativeSpeeds: [] },
      [0.9, 1, 1.1].map((f) => ({ name: `kal16 ${f}`, pcm: atSpeed(phrase, f) })),
      [
        { name: 'speech m', pcm: speech('speech-en-us-m.wav') },
        { name: 'speech f', pcm: speech('speech-en-gb-f.wav') },
        { name: 'room', pcm: room },
      ],
    )
    writeVerifier(
      verifierFileFor(models, head),
      verifierRecord({
        phrase: 'hey jarvis',
        head: HEAD,
        headSha256: sha256File(head),
        window: e.window,
        gate: 0.3,
        model: e.model,
        enrolment: { at: new Date().toISOString(), ...e.summary },
      }),
    )
  } finally {
    await d.close()
  }
  return models
}
