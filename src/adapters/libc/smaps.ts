/** One mapping of a process, as `/proc/<pid>/smaps` describes it (sizes in kB). */
export interface Mapping {
  readonly start: bigint
  readonly end: bigint
  /** `r-xp`, `r--p`, `rw-p`, `rw-s`…: read, write, execute, private or shared. */
  readonly perms: string
  /** The file mapped, `[heap]` and the like, or '' for anonymous memory. */
  readonly path: string
  readonly rssKb: number
  /** Pages of this mapping that are the process's own copies, not the file's (written to). */
  readonly anonymousKb: number
  readonly privateDirtyKb: number
  readonly lockedKb: number
}

const HEADER = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/
const FIELD = /^(\w+):\s+(\d+) kB$/

/** Every mapping in the text of a smaps file, in its order. */
export function parseSmaps(text: string): Mapping[] {
  const out: Mapping[] = []
  let current: { -readonly [K in keyof Mapping]: Mapping[K] } | undefined
  for (const line of text.split('\n')) {
    const header = HEADER.exec(line)
    if (header) {
      current = {
        start: BigInt(`0x${header[1]}`),
        end: BigInt(`0x${header[2]}`),
        perms: header[3] ?? '',
        path: header[4] ?? '',
        rssKb: 0,
        anonymousKb: 0,
        privateDirtyKb: 0,
        lockedKb: 0,
      }
      out.push(current)
      continue
    }
    const field = FIELD.exec(line)
    if (!current || !field) continue
    const kb = Number(field[2])
    if (field[1] === 'Rss') current.rssKb = kb
    else if (field[1] === 'Anonymous') current.anonymousKb = kb
    else if (field[1] === 'Private_Dirty') current.privateDirtyKb = kb
    else if (field[1] === 'Locked') current.lockedKb = kb
  }
  return out
}

/** The mappings of files whose name begins with one of `libraries` (`libonnxruntime.so`). */
export function mappingsOf(mappings: readonly Mapping[], libraries: readonly string[]): Mapping[] {
  return mappings.filter((m) => {
    const name = m.path.slice(m.path.lastIndexOf('/') + 1)
    return m.path.startsWith('/') && libraries.some((l) => name.startsWith(l))
  })
}

/**
 * The mappings whose resident pages may be thrown away and read again from the file: not writable
 * (nothing the process wrote lives there) and holding no page of the process's own (`Anonymous`:
 * the RELRO segment is read-only, yet its pages are private copies the loader wrote relocations
 * into — dropping those took the process down), nothing dirty, nothing locked, something resident.
 * Their pages are the file's, clean, in the page cache: a dropped one is faulted in again from
 * there, unchanged, when next touched.
 */
export function cleanFileMappings(mappings: readonly Mapping[]): Mapping[] {
  return mappings.filter(
    (m) =>
      m.perms[1] !== 'w' &&
      m.anonymousKb === 0 &&
      m.privateDirtyKb === 0 &&
      m.lockedKb === 0 &&
      m.rssKb > 0,
  )
}

/** Resident kB of these mappings together. */
export function residentKb(mappings: readonly Mapping[]): number {
  return mappings.reduce((sum, m) => sum + m.rssKb, 0)
}
