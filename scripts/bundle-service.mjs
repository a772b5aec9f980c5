// The appliance's run path as one bundle (src/app/service.ts says why): dist/app/service.js, as tsc
// compiled it, and the modules it imports, into dist/service/cli.js; each dynamic import becomes a
// chunk beside it, loaded only when reached. Packages stay in node_modules — CommonJS and native
// ones load as they do for any node — except zod, pure ES modules of which the bundle keeps only
// what the schemas use, and of its 64 locales English only (below). dist/service/meta.json says
// which modules each output file holds (test/app/lazy-loading.test.ts reads it). Run by
// `npm run build`, after tsc. The wake-word runtime's worker thread is a second entry.
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { build } from 'esbuild'

const ROOT = join(import.meta.dirname, '..')
const BUNDLED = new Set(['zod'])
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const external = [
  ...Object.keys(pkg.dependencies ?? {}),
  ...Object.keys(pkg.optionalDependencies ?? {}),
].filter((name) => !BUNDLED.has(name))

// zod's `z` namespace re-exports all 64 of its locales (about 300 kB, 38 % of the bundle, parsed at
// every start and kept in memory as source); Nocturn's messages are its own, in English, and zod
// configures English itself (classic/schemas.js imports locales/en.js directly). So the locale index
// is replaced by one that names English only: `z.locales.en` still exists, no other does.
const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /[\\/]locales[\\/]index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: 'zod-locales-english', namespace: 'zod-english-only' }
        : undefined,
    )
    b.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, () => ({
      contents: `export { default as en } from ${JSON.stringify(join(ROOT, 'node_modules/zod/v4/locales/en.js'))}`,
      loader: 'js',
      resolveDir: ROOT,
    }))
  },
}

const outdir = join(ROOT, 'dist', 'service')
rmSync(outdir, { recursive: true, force: true })
const result = await build({
  absWorkingDir: ROOT,
  // The wake-word runtime's thread is a file of its own, beside the chunk that starts it
  // (src/adapters/openwakeword/model-thread.ts): esbuild does not follow `new Worker(new URL(…))`.
  entryPoints: {
    cli: 'dist/app/service.js',
    'model-worker': 'dist/adapters/openwakeword/model-worker.js',
  },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  // No comments or indentation: V8 keeps every script's source in memory for as long as it runs
  // (about 1 MB here), and a comment's one non-Latin-1 character makes it two bytes a character.
  // Names stay as written (no identifier minification), so logs and stack traces read the same;
  // the source map leads back to the sources.
  minifyWhitespace: true,
  charset: 'ascii',
  sourcemap: true,
  sourcesContent: false,
  metafile: true,
  plugins: [englishOnly],
  logLevel: 'warning',
})
writeFileSync(join(outdir, 'meta.json'), JSON.stringify(result.metafile))
