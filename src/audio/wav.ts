import { NocturnError } from '../core/errors.js'

/** What a WAV file holds once it is 16-bit mono PCM: the only shape Nocturn's audio path carries. */
export interface WavPcm {
  readonly sampleRateHz: number
  /** S16LE mono. */
  readonly pcm: Uint8Array
  /** What the file held before conversion, for messages. */
  readonly source: { channels: number; bitsPerSample: number; float: boolean }
}

const WAVE_FORMAT_PCM = 1
const WAVE_FORMAT_FLOAT = 3
const WAVE_FORMAT_EXTENSIBLE = 0xfffe

/**
 * Reads a RIFF/WAVE file and returns 16-bit mono PCM. Channels are averaged and 8/24/32-bit or
 * float samples converted, because that is lossless enough for speech and cheap; a wrong sample
 * rate is refused, not resampled — resampling in JS is what ALSA's plug layer or sox does better.
 */
export function parseWav(bytes: Uint8Array, expectRateHz?: number, name = 'WAV file'): WavPcm {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4))
  if (bytes.byteLength < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') {
    throw new NocturnError('NOC_ERR_WAV_FORMAT', `${name} is not a RIFF/WAVE file`)
  }
  let fmt: { format: number; channels: number; rate: number; bits: number } | undefined
  let at = 12
  while (at + 8 <= bytes.byteLength) {
    const id = tag(at)
    const size = view.getUint32(at + 4, true)
    const body = at + 8
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > bytes.byteLength) {
        throw new NocturnError('NOC_ERR_WAV_TRUNCATED', `${name} ends inside its fmt chunk`)
      }
      let format = view.getUint16(body, true)
      // WAVE_FORMAT_EXTENSIBLE names the real format in the first two bytes of its sub-format GUID.
      if (format === WAVE_FORMAT_EXTENSIBLE && size >= 26) format = view.getUint16(body + 24, true)
      fmt = {
        format,
        channels: view.getUint16(body + 2, true),
        rate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true),
      }
    } else if (id === 'data') {
      if (!fmt)
        throw new NocturnError('NOC_ERR_WAV_FORMAT', `${name} has data before its fmt chunk`)
      // 0xffffffff (or 0) is what streaming writers leave when they never patched the size.
      const open = size === 0xffffffff || size === 0
      if (!open && body + size > bytes.byteLength) {
        throw new NocturnError(
          'NOC_ERR_WAV_TRUNCATED',
          `${name} is truncated: its header promises ${size} bytes of audio, the file holds ${bytes.byteLength - body}`,
        )
      }
      const data = bytes.subarray(body, open ? bytes.byteLength : body + size)
      return convert(data, fmt, expectRateHz, name)
    }
    at = body + size + (size & 1)
  }
  if (!fmt) throw new NocturnError('NOC_ERR_WAV_TRUNCATED', `${name} ends before its fmt chunk`)
  throw new NocturnError('NOC_ERR_WAV_TRUNCATED', `${name} ends before its data chunk`)
}

function convert(
  data: Uint8Array,
  fmt: { format: number; channels: number; rate: number; bits: number },
  expectRateHz: number | undefined,
  name: string,
): WavPcm {
  const float = fmt.format === WAVE_FORMAT_FLOAT
  if (fmt.format !== WAVE_FORMAT_PCM && !float) {
    throw new NocturnError(
      'NOC_ERR_WAV_FORMAT',
      `${name} uses WAVE format ${fmt.format}; only PCM and float are read (convert with: sox in.wav -b 16 out.wav)`,
    )
  }
  const width = fmt.bits / 8
  const okBits = float ? fmt.bits === 32 : [8, 16, 24, 32].includes(fmt.bits)
  if (!okBits || fmt.channels < 1) {
    throw new NocturnError(
      'NOC_ERR_WAV_FORMAT',
      `${name} has ${fmt.channels} channel(s) of ${fmt.bits}-bit${float ? ' float' : ''} samples, which cannot be read`,
    )
  }
  if (expectRateHz !== undefined && fmt.rate !== expectRateHz) {
    throw new NocturnError(
      'NOC_ERR_WAV_FORMAT',
      `${name} is ${fmt.rate} Hz but ${expectRateHz} Hz is needed (convert with: sox in.wav -r ${expectRateHz} -c 1 -b 16 out.wav)`,
    )
  }
  const source = { channels: fmt.channels, bitsPerSample: fmt.bits, float }
  const blockAlign = width * fmt.channels
  const frames = Math.floor(data.byteLength / blockAlign)
  if (fmt.bits === 16 && fmt.channels === 1) {
    // Already the target shape: copy (a Buffer's slice() would be a view) to own aligned bytes.
    return { sampleRateHz: fmt.rate, pcm: new Uint8Array(data.subarray(0, frames * 2)), source }
  }
  const inView = new DataView(data.buffer, data.byteOffset, data.byteLength)
  const out = new Uint8Array(frames * 2)
  const outView = new DataView(out.buffer)
  for (let f = 0; f < frames; f++) {
    let sum = 0
    for (let c = 0; c < fmt.channels; c++)
      sum += sampleAt(inView, f * blockAlign + c * width, fmt.bits, float)
    const v = Math.round((sum / fmt.channels) * 32767)
    outView.setInt16(f * 2, Math.max(-32768, Math.min(32767, v)), true)
  }
  return { sampleRateHz: fmt.rate, pcm: out, source }
}

/** One sample as a float in [-1, 1). */
function sampleAt(v: DataView, at: number, bits: number, float: boolean): number {
  if (float) return v.getFloat32(at, true)
  switch (bits) {
    case 8:
      return (v.getUint8(at) - 128) / 128
    case 16:
      return v.getInt16(at, true) / 32768
    case 24:
      return (v.getUint8(at) | (v.getUint8(at + 1) << 8) | (v.getInt8(at + 2) << 16)) / 8388608
    default:
      return v.getInt32(at, true) / 2147483648
  }
}

/** A 44-byte header for S16LE mono; `dataBytes` 0xffffffff marks a stream whose length is unknown. */
export function wavHeader(sampleRateHz: number, dataBytes: number): Uint8Array {
  const h = new Uint8Array(44)
  const v = new DataView(h.buffer)
  const ascii = (at: number, s: string) => {
    for (let i = 0; i < 4; i++) h[at + i] = s.charCodeAt(i)
  }
  ascii(0, 'RIFF')
  v.setUint32(4, Math.min(0xffffffff, 36 + dataBytes), true)
  ascii(8, 'WAVE')
  ascii(12, 'fmt ')
  v.setUint32(16, 16, true)
  v.setUint16(20, WAVE_FORMAT_PCM, true)
  v.setUint16(22, 1, true)
  v.setUint32(24, sampleRateHz, true)
  v.setUint32(28, sampleRateHz * 2, true)
  v.setUint16(32, 2, true)
  v.setUint16(34, 16, true)
  ascii(36, 'data')
  v.setUint32(40, dataBytes, true)
  return h
}
