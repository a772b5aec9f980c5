import type { AudioOut, DropReport } from '../ports/audio.js'

/** The span of the volume control: 1 % is this many dB below 100 %; 0 % is silence. */
const VOLUME_RANGE_DB = 40

/** The lowest volume an alert (a timer, an earcon, an announcement) plays at, whatever is set. */
export const ALERT_FLOOR_PERCENT = 35

/**
 * Volume in percent to a linear amplitude factor: even steps in dB, because loudness is heard on
 * a logarithmic scale — 100 % is the source as it came, 50 % is 20 dB down, 0 % is silent.
 */
export function gainOf(percent: number): number {
  if (percent <= 0) return 0
  if (percent >= 100) return 1
  return 10 ** ((-VOLUME_RANGE_DB * (1 - percent / 100)) / 20)
}

/** Whether this machine stores an Int16 little-endian, as the PCM is (every board Nocturn runs on). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** Copies `pcm` (16-bit LE mono) scaled by `gain`, rounded and held to the 16-bit range. */
export function scalePcm(pcm: Uint8Array, gain: number): Uint8Array {
  const out = new Uint8Array(pcm.byteLength - (pcm.byteLength % 2))
  if (LITTLE_ENDIAN && pcm.byteOffset % 2 === 0) {
    // Typed arrays in place of a DataView: several times less CPU per sample.
    const src = new Int16Array(pcm.buffer, pcm.byteOffset, out.byteLength / 2)
    const dst = new Int16Array(out.buffer)
    for (let i = 0; i < src.length; i++) {
      dst[i] = Math.min(32767, Math.max(-32768, Math.round((src[i] as number) * gain)))
    }
    return out
  }
  const src = new DataView(pcm.buffer, pcm.byteOffset, out.byteLength)
  const dst = new DataView(out.buffer)
  for (let i = 0; i < out.byteLength; i += 2) {
    const v = Math.round(src.getInt16(i, true) * gain)
    dst.setInt16(i, Math.min(32767, Math.max(-32768, v)), true)
  }
  return out
}

/**
 * The speaker's one gain stage (hardware/audio.md, "Volume"): everything written is scaled by the
 * current volume before the paced buffer gets it. What an alert plays (`alerts`) is scaled too,
 * but never below ALERT_FLOOR_PERCENT, so an alarm is never silent. A change applies to what is
 * written next: a reply already queued plays on at the level it was written at (at most the
 * buffer's lead, well under a second). At 100 % a write passes through untouched, uncopied.
 */
export class GainOut implements AudioOut {
  readonly #inner: AudioOut
  readonly #volume: () => number
  /** The same stage, for alerts: scaled with the floor. */
  readonly alerts: Pick<AudioOut, 'sampleRateHz' | 'write'>

  constructor(inner: AudioOut, volume: () => number) {
    this.#inner = inner
    this.#volume = volume
    this.alerts = {
      sampleRateHz: inner.sampleRateHz,
      write: (pcm) => this.#write(pcm, Math.max(ALERT_FLOOR_PERCENT, this.#volume())),
    }
  }

  get sampleRateHz(): number {
    return this.#inner.sampleRateHz
  }

  write(pcm: Uint8Array): void {
    this.#write(pcm, this.#volume())
  }

  endOfReply(): void {
    this.#inner.endOfReply()
  }

  drop(): DropReport {
    return this.#inner.drop()
  }

  playedMs(): number {
    return this.#inner.playedMs()
  }

  queuedMs(): number {
    return this.#inner.queuedMs()
  }

  close(): Promise<void> {
    return this.#inner.close()
  }

  #write(pcm: Uint8Array, percent: number): void {
    const gain = gainOf(percent)
    this.#inner.write(gain === 1 ? pcm : scalePcm(pcm, gain))
  }
}
