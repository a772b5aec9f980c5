// Runs first in `npm start` and `npm test`: when node_modules is missing or does not match
// package-lock.json, runs `npm ci` (one line says so) so that the two commands work on a fresh
// clone. Plain Node and built-ins only — it runs before any dependency exists — and it lives
// outside node_modules, which `npm ci` deletes. `npm ci` runs only the install lifecycle scripts,
// never `start` or `test`, so the install cannot come back here.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'

/**
 * Why the installed tree is not the locked one, or undefined when it is. npm ci writes the
 * packages it installed to node_modules/.package-lock.json, each entry as in package-lock.json;
 * the tree is current when every installed entry is the locked one and is on disk, and every
 * package the lockfile needs on every platform is installed. Optional packages may be absent:
 * npm skips other platforms' binaries and optional native modules that could not build.
 */
function whyNotCurrent(root) {
  const hiddenPath = join(root, 'node_modules', '.package-lock.json')
  if (!existsSync(hiddenPath)) return 'dependencies not installed'
  const read = (path) => {
    try {
      return JSON.parse(readFileSync(join(root, path), 'utf8')).packages ?? {}
    } catch {
      return undefined
    }
  }
  // Without a readable lockfile npm ci stops with its own message, which says what to do.
  const locked = read('package-lock.json')
  if (locked === undefined) return 'package-lock.json is unreadable'
  const installed = read(join('node_modules', '.package-lock.json'))
  if (installed === undefined) return 'node_modules/.package-lock.json is unreadable'
  for (const [path, entry] of Object.entries(installed)) {
    if (!samePackage(entry, locked[path])) return `${path} differs from package-lock.json`
    // A bare entry without a version is npm's note of an override's target, not a folder.
    const onDisk = entry.version !== undefined || entry.link === true
    if (onDisk && !existsSync(join(root, path))) return `${path} is missing`
  }
  const optional = (entry) =>
    entry.optional === true ||
    entry.devOptional === true ||
    // A link into an optional package (an override's vendored stand-in inside naudiodon, say)
    // is as optional as that package: it is not there when the package did not build.
    (entry.link === true && locked[entry.resolved] !== undefined && optional(locked[entry.resolved]))
  for (const [path, entry] of Object.entries(locked)) {
    if (path === '' || path in installed || optional(entry)) continue
    return `${path} is not installed`
  }
  return undefined
}

/**
 * Whether an installed entry is the locked package: the fields that say which package it is. The
 * rest (licence, engines, os, cpu, libc, bin…) is metadata that npm versions record differently:
 * npm 10, which Node 22 brings, leaves `libc` out of node_modules/.package-lock.json where the
 * lockfile written by npm 11 has it, and comparing it would install again at every start.
 */
function samePackage(installed, locked) {
  if (locked === undefined) return false
  return IDENTITY.every((k) => isDeepStrictEqual(installed[k], locked[k]))
}
const IDENTITY = ['version', 'resolved', 'integrity', 'link']

/** The npm that runs this script (npm sets npm_execpath), or the one on PATH. */
function npmCommand() {
  const cli = process.env.npm_execpath
  if (cli !== undefined && /\.[cm]?js$/.test(cli)) return [process.execPath, [cli]]
  return ['npm', []]
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const why = whyNotCurrent(root)
if (why !== undefined) {
  console.log(`nocturn: installing the dependencies with npm ci (${why})`)
  const [command, prefix] = npmCommand()
  const ci = spawnSync(command, [...prefix, 'ci', '--no-audit', '--no-fund'], {
    cwd: root,
    stdio: 'inherit',
  })
  if (ci.error !== undefined) {
    console.error(`nocturn: could not run npm (${ci.error.message}); install Node.js 20 or later with npm`)
    process.exit(1)
  }
  // npm has printed why it failed; its exit code is ours, with no stack trace on top.
  if (ci.status !== 0) process.exit(ci.status ?? 1)
}
