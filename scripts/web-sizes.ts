/**
 * The phone app's size as `npm run build` makes it — each file raw and gzipped (level 9, what a
 * web server's gzip sends at most) — measured from a fresh build, for docs/phone-app.md's "Size"
 * table. Run: `npx tsx scripts/web-sizes.ts` (prints the table with today's date).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { gzipSync } from 'node:zlib'
import { buildApp } from '../test/web/serve-app.js'

export interface WebSizes {
  /** The app's JavaScript and CSS, everything the page loads to run. */
  readonly app: { bytes: number; gzip: number }
  /** The service worker, `sw.js`. */
  readonly worker: { bytes: number; gzip: number }
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  )
}

export async function measureWebSizes(): Promise<WebSizes> {
  const app = await buildApp()
  try {
    const size = (paths: string[]) =>
      paths.reduce(
        (n, p) => {
          const b = readFileSync(p)
          return { bytes: n.bytes + b.length, gzip: n.gzip + gzipSync(b, { level: 9 }).length }
        },
        { bytes: 0, gzip: 0 },
      )
    const all = files(app.dir)
    const page = all.filter((p) => /^assets\/.*\.(js|css)$/.test(relative(app.dir, p)))
    return { app: size(page), worker: size([join(app.dir, 'sw.js')]) }
  } finally {
    app.remove()
  }
}

const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`

if (import.meta.url === `file://${process.argv[1]}`) {
  const s = await measureWebSizes()
  const day = new Date().toISOString().slice(0, 10)
  process.stdout.write(
    [
      `| measured ${day} | raw | gzipped |`,
      '|---|---|---|',
      `| the app (JavaScript and CSS) | ${kb(s.app.bytes)} | ${kb(s.app.gzip)} |`,
      `| the service worker (\`sw.js\`) | ${kb(s.worker.bytes)} | ${kb(s.worker.gzip)} |`,
      '',
    ].join('\n'),
  )
}
