import createFvad from '@echogarden/fvad-wasm'

/** How eager the detector is: 0 flags the most as speech, 3 the least (fewest false alarms). */
export type VadMode = 0 | 1 | 2 | 3

interface FvadModule {
  HEAPU8: Uint8Array
  _fvad_new(): number
  _fvad_free(inst: number): void
  _fvad_reset(inst: number): void
  _fvad_set_mode(inst: number, mode: number): number
  _fvad_set_sample_rate(inst: number, rate: number): number
  _fvad_process(inst: number, frame: number, samples: number): number
  _malloc(bytes: number): number
  _free(ptr: number): void
}

/**
 * WebRTC's voice-activity detector (libfvad, compiled to WebAssembly and shipped inside its npm
 * package — nothing is downloaded at run time). It classifies 10, 20 or 30 ms frames of 16-bit
 * mono PCM; one frame buffer inside the module's memory is reused for every call.
 */
export class WebRtcVad {
  readonly frameBytes: number
  readonly #fvad: FvadModule
  readonly #inst: number
  readonly #buf: number
  readonly #samples: number
  readonly #rate: number
  readonly #mode: VadMode

  private constructor(
    m: FvadModule,
    inst: number,
    options: { sampleRateHz: number; frameMs: number; mode: VadMode },
  ) {
    this.#fvad = m
    this.#inst = inst
    this.#rate = options.sampleRateHz
    this.#mode = options.mode
    const frameSamples = (options.sampleRateHz * options.frameMs) / 1000
    this.#samples = frameSamples
    this.frameBytes = frameSamples * 2
    this.#buf = m._malloc(this.frameBytes)
  }

  static async create(options: {
    sampleRateHz: number
    frameMs: 10 | 20 | 30
    mode: VadMode
  }): Promise<WebRtcVad> {
    const m = (await createFvad()) as unknown as FvadModule
    const inst = m._fvad_new()
    if (inst === 0) throw new Error('libfvad: out of memory')
    if (m._fvad_set_sample_rate(inst, options.sampleRateHz) !== 0) {
      m._fvad_free(inst)
      throw new Error(
        `libfvad: unsupported sample rate ${options.sampleRateHz} (8, 16, 32, 48 kHz)`,
      )
    }
    m._fvad_set_mode(inst, options.mode)
    return new WebRtcVad(m, inst, options)
  }

  /**
   * Forgets everything learnt from past audio (its noise and speech models adapt continuously),
   * as if just created. libfvad's reset also restores the default mode and rate, so both are set
   * again.
   */
  reset(): void {
    this.#fvad._fvad_reset(this.#inst)
    this.#fvad._fvad_set_sample_rate(this.#inst, this.#rate)
    this.#fvad._fvad_set_mode(this.#inst, this.#mode)
  }

  /** True when `frame` (exactly `frameBytes` long) holds speech. */
  isSpeech(frame: Uint8Array): boolean {
    // HEAPU8 is read each call: the module's memory can grow, which replaces the view.
    this.#fvad.HEAPU8.set(frame, this.#buf)
    const r = this.#fvad._fvad_process(this.#inst, this.#buf, this.#samples)
    if (r < 0) throw new Error(`libfvad rejected a frame of ${frame.byteLength} bytes`)
    return r === 1
  }

  close(): void {
    this.#fvad._free(this.#buf)
    this.#fvad._fvad_free(this.#inst)
  }
}
