import { execFile } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { decodeWindows } from '../../src/adapters/openwakeword/verifier.js'
import { wakeSchema } from '../../src/app/config/wake-schema.js'
import { createWakeDetector } from '../../src/app/wake-detector.js'
import { quietNoise } from '../../src/audio/pcm.js'
import { wavHeader } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import type { WakeDetection } from '../../src/ports/wake-word.js'
import { hermeticAlsa } from '../helpers/alsa.js'
import { missingCommands } from '../helpers/system.js'
import { speakPcm } from '../helpers/tts.js'
import { EMBEDDING, HEADS, MEL } from '../helpers/wake.js'

const ROOT = join(import.meta.dirname, '..', '..')
const run = promisify(execFile)
const skip = missingCommands('arecord', 'espeak-ng', 'sox')
const SECOND = 32_000

interface Setup {
  readonly dir: string
  readonly modelDir: string
  readonly config: string
  readonly verifier: string
}

/** A model folder with hey_jarvis installed, and a config whose microphone is `capturePcm`. */
function setup(capturePcm = 'nocturn_cap'): Setup {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-enrol-'))
  const modelDir = join(dir, 'wake')
  mkdirSync(modelDir)
  copyFileSync(MEL, join(modelDir, 'melspectrogram.onnx'))
  copyFileSync(EMBEDDING, join(modelDir, 'embedding_model.onnx'))
  copyFileSync(HEADS[0]?.file ?? '', join(modelDir, 'hey_jarvis_v0.1.onnx'))
  const config = join(dir, 'config.json')
  writeFileSync(
    config,
    JSON.stringify({
      audio: { backend: 'alsa', capturePcm, playbackPcm: 'nocturn_play' },
      store: { path: join(dir, 'n.db') },
      phonesDir: join(dir, 'phones'),
      phoneApp: { enabled: false },
      listen: { wake: { models: [{ model: 'hey_jarvis' }], modelDir } },
    }),
  )
  return { dir, modelDir, config, verifier: join(modelDir, 'hey_jarvis_v0.1.verifier.json') }
}

async function enroll(env: NodeJS.ProcessEnv, ...args: string[]) {
  return run(process.execPath, ['--import', 'tsx', 'src/app/cli.ts', 'wake', 'enroll', ...args], {
    cwd: ROOT,
    env,
    maxBuffer: 4 * 1024 * 1024,
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  )
}

/** `pcm` in the middle of `seconds` of silence. */
function within(pcm: Uint8Array, seconds: number): Uint8Array {
  const out = new Uint8Array(seconds * SECOND)
  out.set(pcm.subarray(0, out.length - SECOND / 2), SECOND / 2)
  return out
}

const phrase = (speed: number, pitch: number) =>
  speakPcm('hey jarvis', 'en-us', 16_000, { speed, pitch })

/** Quiet noise, as a room between sentences. */
function room(seconds: number): Uint8Array {
  return quietNoise(seconds * SECOND, 150)
}

function wav(pcm: Uint8Array, rateHz = 16_000): Buffer {
  return Buffer.concat([wavHeader(rateHz, pcm.length), pcm])
}

/** `--from` and `--negatives` folders in `s`: the clips' empty, the negatives' with `roomSeconds` of room. */
function wavFolders(s: Setup, roomSeconds: number): { clips: string; other: string } {
  const clips = join(s.dir, 'clips')
  const other = join(s.dir, 'other')
  mkdirSync(clips)
  mkdirSync(other)
  writeFileSync(join(other, 'room.wav'), wav(room(roomSeconds)))
  return { clips, other }
}

describe.skipIf(skip)('nocturn wake enroll', () => {
  it('records clips, a sentence and the room through arecord, trains, reports leave-one-out, and the detector then uses the verifier', async () => {
    const s = setup()
    // What the microphone hears, in the order the command prompts for it: 3 s per clip.
    const clips = [
      [130, 40],
      [150, 60],
      [170, 40],
      [190, 60],
    ].map(([sp, p]) => within(phrase(sp ?? 150, p ?? 50), 3))
    const sentence = within(
      speakPcm('The bins go out on Thursday, and the recycling too.', 'en-us'),
      5,
    )
    // Then the near-misses it asks for (hey_jarvis has four), 3 s each.
    const near = ['hey jars', 'hey java', 'hey charlie', 'hey jasmine'].map((t) =>
      within(speakPcm(t, 'en-us'), 3),
    )
    const alsa = hermeticAlsa(Buffer.concat([...clips, ...near, sentence, room(10)]))
    const r = await enroll(
      alsa.env,
      '--config',
      s.config,
      '--clips',
      '4',
      '--sentences',
      '1',
      '--room-seconds',
      '10',
    )
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('(1/4) say "hey jarvis" now')
    expect(r.stdout).toContain('(4/4) say "hey jarvis" now')
    expect(r.stdout).toContain('(this one must NOT wake it): "hey jars"')
    expect(r.stdout).toContain('now read aloud:')
    expect(r.stdout).toMatch(/leave-one-out: 4 of 4 clips accepted/)
    // The four near-misses it asked for and the clips cut short (two each), at four other speeds.
    expect(r.stdout).toContain('near-misses and cut-short clips heard again at other speeds: 48')
    const record = JSON.parse(readFileSync(s.verifier, 'utf8')) as Record<string, unknown>
    expect(record.kind).toBe('nocturn-wake-verifier')
    expect(record.window).toBe(16)
    // It decides from 0.6 × the threshold (0.5), where the bench had it miss and fire less.
    expect(record.gate).toBeCloseTo(0.3, 10)
    expect(r.stdout).toContain('it decides where the head scores 0.3 or more')
    // The phrase heard under noise, as features a lesson must keep accepting (never audio).
    const noisy = decodeWindows(record.noisy as string, 16 * 96)
    expect(noisy.length).toBeGreaterThan(0)
    expect(noisy.length).toBeLessThanOrEqual(32)

    // From the next start the detector loads it from the model folder, and a held-out clip wakes.
    const wake = wakeSchema.parse({ models: [{ model: 'hey_jarvis' }], modelDir: s.modelDir })
    const woke: WakeDetection[] = []
    const d = await createWakeDetector(wake, { onWake: (w) => woke.push(w), logger: silentLogger })
    try {
      await d.scoreRecorded(within(phrase(160, 50), 4))
      expect(woke.map((w) => w.phrase)).toEqual(['hey jarvis'])
    } finally {
      await d.close()
    }
  }, 300_000)

  it('silent clips: says they are silent, writes nothing, and keeps the verifier already there', async () => {
    const s = setup()
    writeFileSync(s.verifier, 'the one enrolled last week\n')
    const alsa = hermeticAlsa(new Uint8Array(20 * SECOND))
    const r = await enroll(
      alsa.env,
      '--config',
      s.config,
      '--clips',
      '3',
      '--sentences',
      '0',
      '--room-seconds',
      '5',
    )
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('clip 1 of 3: silent')
    expect(r.stderr).toMatch(/0 usable clips of the phrase \(3 silent\); at least 3 are needed/)
    expect(r.stderr).toContain('is kept as it was')
    expect(readFileSync(s.verifier, 'utf8')).toBe('the one enrolled last week\n')
  }, 120_000)

  it('WAV files: a wrong sample rate names the file, an empty folder says so, too few clips says how many', async () => {
    const s = setup()
    const { clips, other } = wavFolders(s, 5)
    const env = { ...process.env }

    let r = await enroll(env, '--config', s.config, '--from', clips, '--negatives', other)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${clips} holds no .wav files`)

    writeFileSync(join(clips, 'a.wav'), wav(phrase(150, 50), 44_100))
    r = await enroll(env, '--config', s.config, '--from', clips, '--negatives', other)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${join(clips, 'a.wav')} is 44100 Hz but 16000 Hz is needed`)

    writeFileSync(join(clips, 'a.wav'), wav(within(phrase(150, 50), 3)))
    writeFileSync(join(clips, 'b.wav'), wav(within(phrase(170, 50), 3)))
    r = await enroll(env, '--config', s.config, '--from', clips, '--negatives', other)
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/2 usable clips of the phrase \(0 silent\); at least 3 are needed/)

    // Three clips of something else: the wake model hears no phrase in them.
    for (const [i, t] of ['good morning', 'see you later', 'thank you'].entries()) {
      writeFileSync(join(clips, `${'abc'[i]}.wav`), wav(within(speakPcm(t, 'en-us'), 3)))
    }
    r = await enroll(env, '--config', s.config, '--from', clips, '--negatives', other)
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/did not hear the phrase/)
    expect(existsSync(s.verifier)).toBe(false)

    r = await enroll(env, '--config', s.config, '--clips', '2')
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--clips needs at least 3')
  }, 300_000)

  it('one-breath clips the pretrained head misses are enrolled: it hears them as the service does, with the companion head', async () => {
    const s = setup()
    const { clips, other } = wavFolders(s, 8)
    // Each is missed by hey_jarvis_v0.1 alone at every hop (checked when this test was written):
    // without the companion, enrolment finds the phrase in none of them and writes nothing.
    const said = [
      [150, 40],
      [160, 60],
      [170, 40],
      [180, 60],
    ] as const
    for (const [i, [speed, pitch]] of said.entries()) {
      const pcm = speakPcm('hey jarvis what time is it', 'en-gb', 16_000, { speed, pitch })
      writeFileSync(join(clips, `${i}.wav`), wav(within(pcm, 4)))
    }
    const r = await enroll(
      { ...process.env },
      '--config',
      s.config,
      '--from',
      clips,
      '--negatives',
      other,
    )
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).not.toContain('did not hear the phrase here')
    expect(r.stdout).toMatch(/leave-one-out: \d of 4 clips accepted/)
    const record = JSON.parse(readFileSync(s.verifier, 'utf8')) as Record<string, unknown>
    expect(record.kind).toBe('nocturn-wake-verifier')
  }, 300_000)

  it('a microphone that does not exist is named, and nothing is written', async () => {
    const s = setup('nocturn_nowhere')
    const alsa = hermeticAlsa(new Uint8Array(SECOND))
    const r = await enroll(alsa.env, '--config', s.config)
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(
      /recording failed: ALSA capture device "nocturn_nowhere" does not exist/,
    )
    expect(existsSync(s.verifier)).toBe(false)
  }, 120_000)
})
