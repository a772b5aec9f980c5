import { execFile } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

// The layering rules themselves live in .dependency-cruiser.cjs (docs/architecture.md says why).
// This test runs them, and checks what the tool cannot say about itself: that it saw all of src/.

const ROOT = join(import.meta.dirname, '..')
const SRC = join(ROOT, 'src')

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : []
  })
}

interface Violation {
  readonly from: string
  readonly to: string
  readonly rule: { readonly name: string }
  readonly cycle?: ReadonlyArray<{ readonly name: string }>
}

interface CruiseResult {
  readonly modules: ReadonlyArray<{ readonly source: string }>
  readonly summary: { readonly violations: readonly Violation[] }
}

async function cruise(): Promise<CruiseResult> {
  const bin = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs')
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [bin, 'src', 'web/src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
    { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
  ).catch((err: { stdout?: string }) => {
    // A violation makes the command exit non-zero; its JSON verdict is still on stdout.
    if (err.stdout) return { stdout: err.stdout }
    throw err
  })
  return JSON.parse(stdout) as CruiseResult
}

describe('the shape of src/ (docs/design.md §1)', () => {
  it('keeps every dependency rule: layers, no I/O in the core, adapters apart, fakes offline, no cycles', async () => {
    const result = await cruise()
    const seen = new Set(result.modules.map((m) => m.source))
    const missed = tsFiles(SRC)
      .map((f) => relative(ROOT, f))
      .filter((f) => !seen.has(f))
    expect(missed).toEqual([])
    const violations = result.summary.violations.map((v) =>
      v.cycle
        ? `${v.rule.name}: ${v.from} → ${v.cycle.map((c) => c.name).join(' → ')}`
        : `${v.rule.name}: ${v.from} → ${v.to}`,
    )
    expect(violations).toEqual([])
  }, 600_000) // ~16 s alone; it type-checks every import, so a loaded machine stretches it a lot
})
