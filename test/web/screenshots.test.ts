import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { inflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'

const DIR = join(import.meta.dirname, '..', '..', 'docs', 'phone-app')
/** Every screen, light and dark (scripts/phone-screenshots.ts). */
const SCREENS = [
  'pair',
  'approvals',
  'context',
  'finished',
  'offline-speaker',
  'chats',
  'conversation',
  'history',
  'grants',
  'speakers',
]
const SHOTS = SCREENS.flatMap((s) => [`${s}-light.png`, `${s}-dark.png`])

/** Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes) into its pixel rows. */
function decodePng(file: Buffer): {
  width: number
  height: number
  channels: number
  pixels: Buffer
} {
  expect(file.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
  let at = 8
  let width = 0
  let height = 0
  let channels = 0
  const idat: Buffer[] = []
  while (at < file.length) {
    const len = file.readUInt32BE(at)
    const type = file.toString('latin1', at + 4, at + 8)
    const data = file.subarray(at + 8, at + 8 + len)
    if (type === 'IHDR') {
      width = data.readUInt32BE(0)
      height = data.readUInt32BE(4)
      expect(data[8]).toBe(8)
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0
      expect(data[12]).toBe(0)
    }
    if (type === 'IDAT') idat.push(data)
    at += 12 + len
  }
  const raw = inflateSync(Buffer.concat(idat))
  const stride = width * channels
  const pixels = Buffer.alloc(stride * height)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    const row = pixels.subarray(y * stride, (y + 1) * stride)
    const up = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : Buffer.alloc(stride)
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? (row[x - channels] ?? 0) : 0
      const b = up[x] ?? 0
      const c = x >= channels ? (up[x - channels] ?? 0) : 0
      const s = src[x] ?? 0
      let v = s
      if (filter === 1) v = s + a
      else if (filter === 2) v = s + b
      else if (filter === 3) v = s + ((a + b) >> 1)
      else if (filter === 4) {
        const p = a + b - c
        const pa = Math.abs(p - a)
        const pb = Math.abs(p - b)
        const pc = Math.abs(p - c)
        v = s + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)
      }
      row[x] = v & 0xff
    }
  }
  return { width, height, channels, pixels }
}

describe('the phone screenshots in docs/phone-app/', () => {
  it.each(SHOTS)('%s is phone-sized and shows a screen, not a blank page', (name) => {
    const { width, height, channels, pixels } = decodePng(readFileSync(join(DIR, name)))
    // 360×740 CSS pixels at a device scale of 2; the card with its context is cut from that screen.
    if (name.startsWith('context-')) {
      expect(width).toBeGreaterThan(300)
      expect(width).toBeLessThanOrEqual(720)
      expect(height).toBeGreaterThan(200)
      expect(height).toBeLessThanOrEqual(1480)
    } else expect([width, height]).toEqual([720, 1480])
    const colours = new Set<number>()
    let darkest = 255
    let lightest = 0
    for (let i = 0; i < pixels.length; i += channels) {
      const [r = 0, g = 0, b = 0] = pixels.subarray(i, i + 3)
      colours.add((r << 16) | (g << 8) | b)
      const l = (r + g + b) / 3
      darkest = Math.min(darkest, l)
      lightest = Math.max(lightest, l)
    }
    // Text on a background: many colours (anti-aliased glyphs) and real contrast.
    expect(colours.size).toBeGreaterThan(200)
    expect(lightest - darkest).toBeGreaterThan(150)
  })
})
