import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * Nocturn's own version, from the package.json of this installation — found by walking up from
 * this module, since it runs from src/ (tsx), dist/ (tsc) and dist/service/ (the bundle) alike.
 * Home Assistant shows it on the device's page; undefined when no package.json can be read.
 */
export function ownVersion(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown
        version?: unknown
      }
      if (pkg.name === 'nocturn' && typeof pkg.version === 'string') return pkg.version
    } catch {
      // Not here: one folder up.
    }
    dir = dirname(dir)
  }
  return undefined
}
