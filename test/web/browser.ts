import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Browser, chromium } from 'playwright-core'
import { systemSkip } from '../helpers/system.js'

/** Debian's chromium; playwright-core drives it and never downloads a browser of its own. */
export const CHROMIUM = process.env.NOCTURN_CHROMIUM ?? '/usr/bin/chromium'

/** Flags for a quiet, loopback-only browser in a container (no sandbox: CI runs as root). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** A skip reason when chromium is missing; under NOCTURN_REQUIRE_SYSTEM=1 that is a failure. */
export function missingChromium(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : systemSkip([CHROMIUM])
}

/**
 * One browser per suite; each phone is its own context (own storage, own broker connection).
 * Playwright gives every launch a fresh temporary --user-data-dir; TMPDIR points it at ours, so
 * the profile is removed with the browser.
 */
export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-chromium-'))
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    env: { ...process.env, TMPDIR: dir, HOME: dir },
    timeout: 30_000,
  })
  return {
    browser,
    async close() {
      await browser.close().catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
