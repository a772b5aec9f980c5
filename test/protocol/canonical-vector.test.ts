import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/core/canonical-json.js'
import { docBlock } from '../helpers/protocol-doc.js'

// RFC 8785 (JCS) vectors from docs/protocol.md, "Canonical forms": input, canonical text, SHA-256.
const lines = docBlock('canonical-vector').trim().split('\n')
const vectors: { input: string; canonical: string; sha256: string }[] = []
for (let i = 0; i < lines.length; i += 3) {
  const field = (line: string | undefined, name: string) => {
    if (!line?.startsWith(`${name}: `)) throw new Error(`expected "${name}: …", got ${line}`)
    return line.slice(name.length + 2)
  }
  vectors.push({
    input: field(lines[i], 'input'),
    canonical: field(lines[i + 1], 'canonical'),
    sha256: field(lines[i + 2], 'sha256'),
  })
}

describe('canonical JSON is RFC 8785 (docs/protocol.md vectors)', () => {
  it('the doc has the vectors: nesting, numbers, strings', () => {
    expect(vectors).toHaveLength(3)
  })

  for (const [n, vec] of vectors.entries()) {
    it(`vector ${n + 1}: canonical text and its SHA-256 over UTF-8`, () => {
      expect(canonicalJson(JSON.parse(vec.input))).toBe(vec.canonical)
      // Canonical JSON is a fixed point.
      expect(canonicalJson(JSON.parse(vec.canonical))).toBe(vec.canonical)
      expect(createHash('sha256').update(vec.canonical, 'utf8').digest('hex')).toBe(vec.sha256)
    })
  }

  it('the pitfalls the vectors cover are really in them', () => {
    const all = vectors.map((v) => v.canonical).join('\n')
    for (const s of [
      '1e+21',
      '1e-7',
      '0.000001',
      ',0,',
      '"é"',
      '😀',
      '\\u0000',
      '\\u001f',
      'back/slash',
    ]) {
      expect(all).toContain(s)
    }
    // UTF-16 order, not code point order: the emoji key sorts before U+FF61.
    expect(all.indexOf('"😀":')).toBeLessThan(all.indexOf('"｡":'))
  })
})
