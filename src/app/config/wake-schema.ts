import { z } from 'zod'

/**
 * `listen.wake`: the on-device wake word (docs/wake-word.md). Models are the household's choice —
 * none ships with Nocturn; `nocturn wake install <name>` puts a pretrained one in `modelDir`.
 * The defaults come from what was measured on TTS speech (bench/RESULTS.md, "Wake word").
 */

/** Upstream's default: 92 % of clean TTS wake phrases reach it; 0.9 halves false accepts but misses more. */
const DEFAULT_WAKE_THRESHOLD = 0.5
/**
 * With a household verifier, its probability is what the threshold judges, and it sits near 1 on
 * the household's own phrase: at 0.7, a third of 0.5's false wakes on the bench's near-miss-heavy
 * stream (2.5 an hour against 8.8) for the same clean and 10 dB pink-noise misses (bench/RESULTS.md,
 * "the verifier's threshold").
 */
const DEFAULT_VERIFIED_THRESHOLD = 0.7
/**
 * Two 80 ms chunks in a row above the threshold: a stray single-chunk peak (the commonest false
 * accept on dense speech) does not fire, and a real phrase stays above for several chunks; it
 * costs 80 ms of latency.
 */
export const DEFAULT_WAKE_CONSECUTIVE = 2
/** One wake per utterance: the phrase stays above the threshold for up to ~1 s after it fires. */
const DEFAULT_WAKE_REFRACTORY_MS = 2000
export const DEFAULT_WAKE_MODEL_DIR = '/var/lib/nocturn/wake'

const threshold = z.number().gt(0).lt(1)

const wakeModelSchema = z.strictObject({
  /** A pretrained name (`nocturn wake list`) or the absolute path of an openWakeWord .onnx head. */
  model: z
    .string()
    .min(1)
    .refine(
      (m) => /^[a-z0-9_]+$/.test(m) || m.startsWith('/'),
      'a pretrained name such as "hey_jarvis" (nocturn wake list) or an absolute path to a .onnx file',
    ),
  /** What the household says, as logs and the status show it; from the name or file if unset. */
  phrase: z.string().min(1).max(64).optional(),
  /** This phrase's own threshold; if unset `listen.wake.verifiedThreshold` with a household verifier, else `listen.wake.threshold`. */
  threshold: threshold.optional(),
  /**
   * The household's verifier (`nocturn wake enroll`): unset, the enrolled one in `modelDir` when
   * there is one; false, none; a path, that file.
   */
  verifier: z
    .union([z.literal(false), z.string().startsWith('/', 'an absolute path or false')])
    .optional(),
  /**
   * Our companion head beside a pretrained head that has one (hey_jarvis: it hears the phrase run
   * straight into a command); false turns it off. A head given by path has none.
   */
  companion: z.literal(false).optional(),
})

export const wakeSchema = z.strictObject({
  /** One or more wake phrases, all scored on one shared front end. */
  models: z
    .array(wakeModelSchema)
    .min(1, 'name at least one wake model, e.g. [{ "model": "hey_jarvis" }]'),
  /** Where `nocturn wake install` puts pretrained heads and the two feature models they all use. */
  modelDir: z.string().startsWith('/', 'an absolute path').default(DEFAULT_WAKE_MODEL_DIR),
  /** The score (0–1) a phrase must reach; higher: fewer false wakes, more missed ones. */
  threshold: threshold.default(DEFAULT_WAKE_THRESHOLD),
  /** The threshold of a phrase with a household verifier (`nocturn wake enroll`). */
  verifiedThreshold: threshold.default(DEFAULT_VERIFIED_THRESHOLD),
  /** How many 80 ms chunks in a row must reach it. */
  consecutive: z.number().int().min(1).max(10).default(DEFAULT_WAKE_CONSECUTIVE),
  /** After a wake, none fires again for this long. */
  refractoryMs: z.number().int().min(0).max(30_000).default(DEFAULT_WAKE_REFRACTORY_MS),
  /** auto: the native library where onnxruntime-node has one (x64, arm64), WASM elsewhere (armv7). */
  runtime: z.enum(['auto', 'native', 'wasm']).default('auto'),
})

export type WakeConfig = z.infer<typeof wakeSchema>
