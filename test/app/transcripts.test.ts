import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { transcripts } from '../../src/app/commands/transcripts.js'
import { captureIo } from '../helpers/capture-io.js'

const CLI = join(import.meta.dirname, '../../src/app/cli.ts')
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href

/** `nocturn …` from the sources, in `cwd`, with only `env` (and PATH). */
function nocturn(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]) {
  return spawnSync(process.execPath, ['--import', TSX, CLI, ...args], {
    cwd,
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
  })
}

/** A speaker's configuration naming its store; its secrets name files nobody can read. */
function speaker(): { dir: string; file: string; db: string } {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-transcripts-'))
  const db = join(dir, 'lib', 'nocturn.db')
  const file = join(dir, 'config.json')
  writeFileSync(
    file,
    JSON.stringify({
      provider: { apiKeyFile: '/nonexistent/gemini-api-key' },
      mqtt: { url: 'mqtt://hub.lan:1883', username: 'k', passwordFile: '/nonexistent/pw' },
      store: { path: db },
    }),
  )
  return { dir, file, db }
}

/** A store at `path` holding one spoken conversation; its id. */
function oneConversation(path: string, title: string): string {
  mkdirSync(dirname(path), { recursive: true })
  const store = new SqliteStore(path)
  const c = store.createConversation({ channel: 'voice', title, at: Date.now() })
  store.append(c.id, {
    role: 'user',
    text: 'Who let the plumber in?',
    channel: 'voice',
    at: Date.now(),
  })
  store.close()
  return c.id
}

describe("nocturn transcripts reads the speaker's store", () => {
  it("--config: lists and shows a conversation kept in the configuration's store.path", async () => {
    const s = speaker()
    const id = oneConversation(s.db, 'the plumber')
    const list = captureIo({})
    expect(await transcripts(['list', '--config', s.file], list.io)).toBe(0)
    expect(list.text.err).toBe('')
    expect(list.text.out).toMatch(new RegExp(`^${id}  voice .* the plumber\n`))

    const show = captureIo({ NOCTURN_CONFIG: s.file })
    expect(await transcripts(['show', id], show.io)).toBe(0)
    expect(show.text.out).toMatch(/voice +user +Who let the plumber in\?/)

    const del = captureIo({ NOCTURN_CONFIG: s.file })
    expect(await transcripts(['delete', id], del.io)).toBe(0)
    const again = captureIo({ NOCTURN_CONFIG: s.file })
    expect(await transcripts(['show', id], again.io)).toBe(1)
    expect(again.text.err).toContain(`no conversation ${id} in ${s.db}`)
  })

  it('--store wins over the configuration', async () => {
    const s = speaker()
    oneConversation(s.db, 'in the config')
    const other = join(s.dir, 'other', 'nocturn.db')
    const id = oneConversation(other, 'named by --store')
    const r = captureIo({ NOCTURN_CONFIG: s.file })
    expect(await transcripts(['list', '--store', other], r.io)).toBe(0)
    expect(r.text.out).toContain(`${id}  voice`)
    expect(r.text.out).toContain('named by --store')
    expect(r.text.out).not.toContain('in the config')
  })

  it('a store that does not exist is named with the fix, exit 1, and no file is created', async () => {
    const s = speaker()
    const r = captureIo({ NOCTURN_CONFIG: s.file })
    expect(await transcripts(['list'], r.io)).toBe(1)
    expect(r.text.err).toContain(`no store at ${s.db} (store.path in ${s.file})`)
    expect(r.text.err).toMatch(/--config <path> or --store <path>/)
    expect(r.text.out).toBe('')
    expect(existsSync(join(s.dir, 'lib'))).toBe(false)

    const missing = join(s.dir, 'nope.db')
    const flag = captureIo({})
    expect(await transcripts(['list', '--store', missing], flag.io)).toBe(1)
    expect(flag.text.err).toContain(`no store at ${missing} (--store)`)
    expect(readdirSync(s.dir)).toEqual(['config.json'])
  })

  it('a configuration named but unusable is an error with its problem, exit 2', async () => {
    const r = captureIo({ NOCTURN_CONFIG: '/nonexistent/config.json' })
    expect(await transcripts(['list'], r.io)).toBe(2)
    expect(r.text.err).toContain('/nonexistent/config.json does not exist')
  })

  it('an unknown option or verb prints the usage, exit 2', async () => {
    const r = captureIo({})
    expect(await transcripts(['list', '--stor', 'x'], r.io)).toBe(2)
    expect(r.text.err).toContain('usage: nocturn transcripts list [--config <path>]')
    expect(await transcripts(['frob'], captureIo({}).io)).toBe(2)
  })

  it('as a command, in a folder of its own: the configured store, and nothing made where it runs', () => {
    const s = speaker()
    const id = oneConversation(s.db, 'the plumber')
    const cwd = mkdtempSync(join(tmpdir(), 'nocturn-cwd-'))
    const ok = nocturn(cwd, { NOCTURN_CONFIG: s.file }, 'transcripts', 'list')
    expect(ok.stderr).toBe('')
    expect(ok.status).toBe(0)
    expect(ok.stdout).toContain(`${id}  voice`)
    const flag = nocturn(cwd, {}, 'transcripts', 'show', id, '--config', s.file)
    expect(flag.status).toBe(0)
    expect(flag.stdout).toMatch(/voice +user +Who let the plumber in\?/)

    const gone = speaker()
    const missing = nocturn(cwd, { NOCTURN_CONFIG: gone.file }, 'transcripts', 'list')
    expect(missing.status).toBe(1)
    expect(missing.stderr).toContain(`no store at ${gone.db} (store.path in ${gone.file})`)
    expect(readdirSync(gone.dir)).toEqual(['config.json'])
    expect(readdirSync(cwd)).toEqual([])
  })
})
