import { crc32, deflateSync } from 'node:zlib'
import type { Plugin } from 'vite'

/**
 * The app's icon, drawn here (no third-party art) and written at build time: a crescent moon and
 * two stars on the theme colour, as an SVG (the favicon), PNGs for the web app manifest (192 and
 * 512 px, and a full-bleed "maskable" one for home screens that cut their own shape), a
 * favicon.ico holding a 32 px PNG (so a browser asking for /favicon.ico gets one), and the
 * manifest itself, so the app installs on a home screen.
 */
export const THEME_COLOUR = '#1f2937'
const MOON = '#fde68a'

/** A disc in the unit square; the moon is the first disc less the second. */
interface Disc {
  readonly x: number
  readonly y: number
  readonly r: number
}
const MOON_DISC: Disc = { x: 0.5, y: 0.5, r: 0.28 }
const MOON_CUT: Disc = { x: 0.61, y: 0.41, r: 0.24 }
const STARS: readonly Disc[] = [
  { x: 0.8, y: 0.3, r: 0.03 },
  { x: 0.66, y: 0.48, r: 0.022 },
]
/** Corner radius of the plain icon; the maskable one fills the square (the launcher cuts it). */
const CORNER = 0.2

function inDisc(d: Disc, x: number, y: number): boolean {
  return (x - d.x) ** 2 + (y - d.y) ** 2 <= d.r * d.r
}

function inRoundedSquare(x: number, y: number, r: number): boolean {
  const cx = Math.min(Math.max(x, r), 1 - r)
  const cy = Math.min(Math.max(y, r), 1 - r)
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r
}

function rgb(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16)
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255]
}

export function iconSvg(): string {
  const c = (d: Disc, extra = '') =>
    `<circle cx="${d.x * 100}" cy="${d.y * 100}" r="${d.r * 100}" fill="${MOON}"${extra}/>`
  return [
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">',
    `<rect width="100" height="100" rx="${CORNER * 100}" fill="${THEME_COLOUR}"/>`,
    '<mask id="cut"><rect width="100" height="100" fill="#fff"/>',
    `<circle cx="${MOON_CUT.x * 100}" cy="${MOON_CUT.y * 100}" r="${MOON_CUT.r * 100}" fill="#000"/></mask>`,
    c(MOON_DISC, ' mask="url(#cut)"'),
    ...STARS.map((s) => c(s)),
    '</svg>',
  ].join('')
}

/** RGBA pixels of the icon at `size` px, each pixel sampled 3×3 for smooth edges. */
export function iconPixels(size: number, maskable: boolean): Uint8Array {
  const out = new Uint8Array(size * size * 4)
  const bg = rgb(THEME_COLOUR)
  const fg = rgb(MOON)
  const n = 3
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let inBg = 0
      let inFg = 0
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const x = (px + (sx + 0.5) / n) / size
          const y = (py + (sy + 0.5) / n) / size
          if (!maskable && !inRoundedSquare(x, y, CORNER)) continue
          inBg++
          const moon = inDisc(MOON_DISC, x, y) && !inDisc(MOON_CUT, x, y)
          if (moon || STARS.some((s) => inDisc(s, x, y))) inFg++
        }
      }
      const i = (py * size + px) * 4
      const a = inBg / (n * n)
      const f = inBg === 0 ? 0 : inFg / inBg
      for (let k = 0; k < 3; k++) out[i + k] = Math.round((bg[k] ?? 0) * (1 - f) + (fg[k] ?? 0) * f)
      out[i + 3] = Math.round(a * 255)
    }
  }
  return out
}

/** A PNG (8-bit RGBA, no interlace) of square RGBA pixels. */
export function png(size: number, rgba: Uint8Array): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4)
    len.writeUInt32BE(data.length)
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([len, body, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(size, 0)
  ihdr.writeUInt32BE(size, 4)
  ihdr.set([8, 6, 0, 0, 0], 8)
  // Each scanline starts with filter type 0 (none).
  const raw = Buffer.alloc(size * (size * 4 + 1))
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0
    raw.set(rgba.subarray(y * size * 4, (y + 1) * size * 4), y * (size * 4 + 1) + 1)
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/** An .ico holding one PNG image (the PNG-in-ICO form every current browser reads). */
function ico(size: number, image: Buffer): Buffer {
  const head = Buffer.alloc(22)
  head.writeUInt16LE(0, 0)
  head.writeUInt16LE(1, 2)
  head.writeUInt16LE(1, 4)
  head.writeUInt8(size, 6)
  head.writeUInt8(size, 7)
  head.writeUInt16LE(1, 10)
  head.writeUInt16LE(32, 12)
  head.writeUInt32LE(image.length, 14)
  head.writeUInt32LE(22, 18)
  return Buffer.concat([head, image])
}

export function manifest(): Record<string, unknown> {
  return {
    name: 'Nocturn',
    short_name: 'Nocturn',
    description: 'Approve what your Nocturn speaker asks, and read its conversations.',
    start_url: './',
    scope: './',
    display: 'standalone',
    theme_color: THEME_COLOUR,
    background_color: THEME_COLOUR,
    icons: [
      { src: 'icon.svg', sizes: 'any', type: 'image/svg+xml' },
      { src: 'icon-192.png', sizes: '192x192', type: 'image/png' },
      { src: 'icon-512.png', sizes: '512x512', type: 'image/png' },
      { src: 'icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
    ],
  }
}

/** The vite plugin: every file above emitted into the build beside index.html. */
export function appIcons(): Plugin {
  return {
    name: 'nocturn-app-icons',
    apply: 'build',
    generateBundle() {
      const emit = (fileName: string, source: string | Uint8Array) =>
        this.emitFile({ type: 'asset', fileName, source })
      emit('icon.svg', iconSvg())
      emit('icon-192.png', png(192, iconPixels(192, false)))
      emit('icon-512.png', png(512, iconPixels(512, false)))
      emit('icon-maskable-512.png', png(512, iconPixels(512, true)))
      emit('favicon.ico', ico(32, png(32, iconPixels(32, false))))
      emit('manifest.webmanifest', `${JSON.stringify(manifest(), null, 2)}\n`)
    },
  }
}
