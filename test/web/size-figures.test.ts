import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { measureWebSizes } from '../../scripts/web-sizes.js'

const DOC = new URL('../../docs/phone-app.md', import.meta.url)

/** A row of docs/phone-app.md's "Size" table: its raw and gzipped figures, in bytes. */
function row(doc: string, label: string): { bytes: number; gzip: number } {
  const line = doc.split('\n').find((l) => l.startsWith(`| ${label} |`))
  const m = line?.match(/\| ([\d.]+) KB \| ([\d.]+) KB \|$/)
  if (!m) throw new Error(`docs/phone-app.md has no size row "${label}"`)
  return { bytes: Number(m[1]) * 1000, gzip: Number(m[2]) * 1000 }
}

/** Issue 44, item 8: the figures in the docs come from a measurement, with its date. */
describe('the size figures in docs/phone-app.md', () => {
  it('are dated and within 10 % of a fresh build', { timeout: 120_000 }, async () => {
    const doc = readFileSync(DOC, 'utf8')
    const day = doc.match(/^\| measured (\d{4}-\d\d-\d\d) \| raw \| gzipped \|$/m)?.[1]
    expect(day, 'the table says when it was measured').toBeDefined()
    expect(Number.isNaN(Date.parse(day ?? ''))).toBe(false)
    const measured = await measureWebSizes()
    const near = (doc: number, real: number) => Math.abs(doc - real) / real
    for (const [label, real] of [
      ['the app (JavaScript and CSS)', measured.app],
      ['the service worker (`sw.js`)', measured.worker],
    ] as const) {
      const said = row(doc, label)
      expect(near(said.bytes, real.bytes), `${label}, raw`).toBeLessThan(0.1)
      expect(near(said.gzip, real.gzip), `${label}, gzipped`).toBeLessThan(0.1)
    }
    // No figure of the service worker from before it was measured (it was said to be ≈ 350 KiB).
    expect(doc).not.toMatch(/≈ 350 KiB/)
  })
})
