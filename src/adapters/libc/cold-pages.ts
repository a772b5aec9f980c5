import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { setImmediate as turn } from 'node:timers/promises'
import { errorText } from '../../core/errors.js'
import { cleanFileMappings, mappingsOf, parseSmaps, residentKb } from './smaps.js'

/** madvise's advice: the pages' mappings are dropped; a file's come back from the page cache. */
const MADV_DONTNEED = 4
/** koffi's own native library, given back with the rest: it is called once and then sleeps. */
const KOFFI_LIBRARY = 'koffi.node'

/** What a release did: the libraries' resident kB before and after, or why nothing was done. */
export type ColdPagesRelease =
  | {
      readonly released: true
      readonly beforeKb: number
      readonly afterKb: number
      /** Mappings given back (clean, read-only, file-backed). */
      readonly mappings: number
      /** Mappings madvise refused (the others were still given back), and why the first was. */
      readonly refused?: { readonly mappings: number; readonly why: string }
    }
  | { readonly released: false; readonly why: string }

interface Koffi {
  load(path: null): { func(definition: string): (...args: unknown[]) => unknown }
  errno(): number
  readonly os: { readonly errno: Readonly<Record<string, number>> }
}

/**
 * Gives back the resident pages of the named native libraries (file names beginning with one of
 * `libraries`, e.g. `libonnxruntime.so`) that are clean copies of their files: libc's `madvise(…,
 * MADV_DONTNEED)` over each read-only mapping that holds no page of the process's own (smaps.ts).
 * The pages stay in the kernel's page cache, which may reclaim them under memory pressure; code
 * still in use is faulted in again from there (a minor fault, no disk) when next run. Linux only;
 * elsewhere, or where koffi (the FFI that calls libc) does not load or madvise refuses, nothing is
 * done and the answer says why.
 *
 * In steps, the event loop turning between them (the smaps reads off it): inside a CPU quota each
 * step takes about a second of wall time, and done at once the release held the loop 4.6–4.7 s,
 * longer than the detector's backlog (2 s then), so the chunks that came meanwhile were dropped
 * unheard.
 * `between` is awaited before each step after the first (the owner's: until no session runs), so
 * a release that takes seconds on a slow board does not go on beside a session begun meanwhile.
 */
export async function releaseColdPages(
  libraries: readonly string[],
  smapsFile = '/proc/self/smaps',
  between: () => Promise<void> = () => Promise.resolve(),
): Promise<ColdPagesRelease> {
  if (process.platform !== 'linux') {
    return { released: false, why: `not Linux (${process.platform})` }
  }
  let koffi: Koffi
  let madvise: (addr: bigint, length: bigint, advice: number) => number
  try {
    koffi = createRequire(import.meta.url)('koffi') as Koffi
    // Addresses as integers: no pointer object is ever made of them.
    madvise = koffi
      .load(null)
      .func('int madvise(uintptr_t addr, size_t length, int advice)') as typeof madvise
  } catch (err) {
    return { released: false, why: `koffi does not load (${errorText(err)})` }
  }
  const names = [...libraries, KOFFI_LIBRARY]
  let mappings: ReturnType<typeof parseSmaps>
  try {
    mappings = mappingsOf(parseSmaps(await readFile(smapsFile, 'utf8')), names)
  } catch (err) {
    return { released: false, why: `cannot read ${smapsFile} (${errorText(err)})` }
  }
  await turn()
  await between()
  const clean = cleanFileMappings(mappings)
  // Each mapping on its own: one refused leaves the others to give back, and the answer counts both.
  let refused = 0
  let why: string | undefined
  for (const m of clean) {
    if (madvise(m.start, m.end - m.start, MADV_DONTNEED) === 0) continue
    refused++
    why ??= `madvise refused (${errnoName(koffi, koffi.errno())})`
  }
  const given = clean.length - refused
  if (why && given === 0) return { released: false, why }
  await between()
  const after = mappingsOf(parseSmaps(await readFile(smapsFile, 'utf8')), names)
  return {
    released: true,
    beforeKb: residentKb(mappings),
    afterKb: residentKb(after),
    mappings: given,
    ...(why && { refused: { mappings: refused, why } }),
  }
}

function errnoName(koffi: Koffi, errno: number): string {
  const name = Object.entries(koffi.os.errno).find(([, n]) => n === errno)?.[0]
  return name ? `${name}, errno ${errno}` : `errno ${errno}`
}
