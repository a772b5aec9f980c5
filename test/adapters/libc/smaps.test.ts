import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  cleanFileMappings,
  type Mapping,
  mappingsOf,
  parseSmaps,
  residentKb,
} from '../../../src/adapters/libc/smaps.js'

/**
 * A process's smaps after onnxruntime-node ran a model, with koffi loaded (trimmed to the
 * runtime's library, koffi's code, the heap and onnxruntime's shared telemetry file).
 */
const FIXTURE = readFileSync(
  join(import.meta.dirname, '../../../fixtures/smaps/onnxruntime.txt'),
  'utf8',
)
const ORT = 'libonnxruntime.so.1'

describe('the mappings whose pages may be given back', () => {
  const all = parseSmaps(FIXTURE)

  it('reads each mapping: its addresses, permissions, file and resident, anonymous and dirty kB', () => {
    expect(all).toHaveLength(8)
    const relro = all[4]
    expect(relro).toMatchObject({
      start: 0x7f1ac3f2d000n,
      end: 0x7f1ac3fad000n,
      perms: 'r--p',
      rssKb: 512,
      anonymousKb: 512,
      privateDirtyKb: 512,
      lockedKb: 0,
    })
    expect(relro?.path.endsWith(`/${ORT}`)).toBe(true)
    expect(all[0]?.path).toBe('[heap]')
  })

  it("takes the library's read-only clean mappings, never its RELRO copies, its data, the heap or a shared file", () => {
    const ort = mappingsOf(all, ['libonnxruntime.so'])
    expect(ort.map((m) => m.perms)).toEqual(['r--p', 'r-xp', 'r--p', 'r--p', 'rw-p'])
    expect(residentKb(ort)).toBe(1264 + 19132 + 2332 + 512 + 32)
    const clean = cleanFileMappings(ort)
    // The header, the code and the read-only data: clean copies of the file.
    expect(clean.map((m) => [m.perms, m.rssKb])).toEqual([
      ['r--p', 1264],
      ['r-xp', 19132],
      ['r--p', 2332],
    ])
    // The RELRO segment is read-only too, but its pages are the loader's own copies: left.
    expect(clean.some((m) => m.anonymousKb > 0 || m.perms[1] === 'w')).toBe(false)
    // A name that begins no file's name takes nothing; the heap and the shared file are no library.
    expect(mappingsOf(all, ['libc.so'])).toEqual([])
    expect(cleanFileMappings(all).map((m) => m.path.split('/').pop())).toEqual([
      ORT,
      ORT,
      ORT,
      'koffi.node',
    ])
  })

  it('leaves each mapping with one reason to: a copy of its own, a write bit, dirt, a lock, nothing resident', () => {
    const clean = cleanFileMappings(mappingsOf(all, ['libonnxruntime.so']))
    const [header, code, data] = clean as [Mapping, Mapping, Mapping]
    expect(cleanFileMappings([header, code, data])).toHaveLength(3)
    expect(
      cleanFileMappings([
        { ...header, anonymousKb: 4 },
        { ...code, perms: 'rwxp' },
        { ...data, privateDirtyKb: 4 },
        { ...header, lockedKb: 4 },
        { ...code, rssKb: 0 },
      ]),
    ).toEqual([])
  })
})
