import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = join(import.meta.dirname, '..', 'src')

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : []
  })
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map(
    (m) => m[1] as string,
  )
}

const all = files(SRC).map((f) => ({ file: relative(SRC, f), imports: importsOf(f) }))

describe('the shape of src/ (DESIGN §1)', () => {
  it('core, ports, turn and voice import no vendor package and no child_process', () => {
    const offenders = all
      .filter((f) => /^(core|ports|turn|voice)\//.test(f.file))
      .flatMap((f) =>
        f.imports
          .filter(
            (i) => !i.startsWith('.') && (!i.startsWith('node:') || i === 'node:child_process'),
          )
          .map((i) => `${f.file} imports ${i}`),
      )
    expect(offenders).toEqual([])
  })

  it('core, ports, turn and voice import no adapter or app code', () => {
    const offenders = all
      .filter((f) => /^(core|ports|turn|voice)\//.test(f.file))
      .flatMap((f) =>
        f.imports.filter((i) => /\/(adapters|app)\//.test(i)).map((i) => `${f.file} imports ${i}`),
      )
    expect(offenders).toEqual([])
  })

  it('an adapter imports no other adapter', () => {
    const offenders = all
      .filter((f) => f.file.startsWith('adapters/'))
      .flatMap((f) => {
        const own = f.file.split('/').slice(0, 2).join('/')
        return f.imports
          .filter((i) => i.startsWith('.'))
          .map((i) => relative(SRC, join(SRC, f.file, '..', i)))
          .filter((target) => target.startsWith('adapters/') && !target.startsWith(own))
          .map((target) => `${f.file} imports ${target}`)
      })
    expect(offenders).toEqual([])
  })
})
