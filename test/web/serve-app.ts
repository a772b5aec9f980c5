import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'vite'
import { startPhoneAppServer } from '../../src/adapters/http-static/phone-app-server.js'
import { silentLogger } from '../../src/core/logger.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Builds the phone app (the same vite config as `npm run build`) into a fresh folder. */
export async function buildApp(): Promise<{ dir: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-web-'))
  await build({
    configFile: join(ROOT, 'web/vite.config.ts'),
    logLevel: 'error',
    build: { outDir: dir, emptyOutDir: true },
  })
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * The app as the device serves it: the device's own server (src/adapters/http-static/) with the
 * built files and `/config.json`, on loopback.
 */
export async function serveApp(
  dir: string,
  config: Record<string, unknown>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = await startPhoneAppServer({
    root: dir,
    port: 0,
    host: '127.0.0.1',
    config: () => config,
    logger: silentLogger,
  })
  return { url: `http://127.0.0.1:${server.port}/`, close: () => server.close() }
}
