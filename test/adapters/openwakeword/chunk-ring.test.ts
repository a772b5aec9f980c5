import { describe, expect, it } from 'vitest'
import { ChunkRing, type RingStart } from '../../../src/adapters/openwakeword/chunk-ring.js'

/** One 80 ms chunk of 16-bit samples, every sample `value`. */
function chunk(value: number): Uint8Array {
  const pcm = new Int16Array(1280).fill(value)
  return new Uint8Array(pcm.buffer)
}

/** A ring nobody takes from (a stalled scorer), and what it said of each chunk. */
function stalled(backlogMs: number, start?: RingStart) {
  const drops: number[] = []
  const ring = new ChunkRing(
    backlogMs,
    () => 0,
    (dropped) => drops.push(dropped),
    start,
  )
  const write = (n: number, from: number) => {
    for (let k = 0; k < n; k++) ring.write(chunk(from + k), (from + k + 1) * 80, true)
  }
  return { ring, drops, write }
}

describe('the chunk ring', () => {
  it('keeps the ordinary backlog and drops the oldest chunk for each new one beyond it', () => {
    const { ring, drops, write } = stalled(400)
    write(8, 0)
    expect(ring.queued).toBe(5)
    expect(drops).toEqual([0, 0, 0, 0, 0, 1, 1, 1])
    // The oldest kept is the fourth chunk: the first three went.
    expect(ring.take(true).chunk[0]).toBe(3)
  })

  it('keeps the deeper start backlog during the start, then drops down to the ordinary one at once, every chunk counted', () => {
    // A start of 1.6 s of audio with 1.2 s kept, then 400 ms.
    const { ring, drops, write } = stalled(400, { backlogMs: 1200, ms: 1600, settleMs: 1600 })
    write(15, 0)
    expect(ring.queued).toBe(15)
    expect(drops.every((d) => d === 0)).toBe(true)
    // Chunks 16–20 still end inside the start: the deeper backlog is full, one dropped for each.
    write(5, 15)
    expect(ring.queued).toBe(15)
    expect(drops.slice(15)).toEqual([1, 1, 1, 1, 1])
    // The first chunk past the start: down to the ordinary backlog at once, the 11 beyond it
    // counted dropped.
    write(1, 20)
    expect(drops.at(-1)).toBe(11)
    expect(ring.queued).toBe(5)
    expect(ring.take(true).chunk[0]).toBe(16)
    write(1, 21)
    expect(drops.at(-1)).toBe(0)
  })

  it('takes the chunks in order, each once, while they fit', () => {
    const { ring, drops, write } = stalled(400, { backlogMs: 1200, ms: 10_000, settleMs: 10_000 })
    write(12, 0)
    const taken: number[] = []
    while (ring.queued > 0) taken.push(ring.take(true).chunk[0] ?? -1)
    expect(taken).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    expect(drops.reduce((a, b) => a + b, 0)).toBe(0)
  })

  it('ends the start at a catch-up once enough audio has passed, not before', () => {
    const { ring, drops, write } = stalled(400, { backlogMs: 1200, ms: 10_000, settleMs: 800 })
    write(5, 0)
    // Caught up after 400 ms of audio: too soon, the start holds.
    while (ring.queued > 0) ring.take(true)
    ring.caughtUp()
    write(10, 5)
    expect(ring.queued).toBe(10)
    expect(drops.every((d) => d === 0)).toBe(true)
    // Caught up after 1.2 s of audio: the start is over, 400 ms from the next chunk on.
    while (ring.queued > 0) ring.take(true)
    ring.caughtUp()
    write(6, 15)
    expect(ring.queued).toBe(5)
    expect(drops.slice(15)).toEqual([0, 0, 0, 0, 0, 1])
  })
})

/**
 * A start of 8 s of audio keeping 4 s, judged from 2.4 s over 800 ms: a scorer that stalls for
 * the first 20 chunks (1.6 s), then takes `take(k)` chunks as the k-th one comes. Says what was
 * dropped for each chunk and what is queued at the end.
 */
function judged(take: (k: number) => number, chunks: number) {
  const { ring, drops, write } = stalled(400, {
    backlogMs: 4000,
    ms: 8000,
    settleMs: 8000,
    judgeFromMs: 2400,
    judgeOverMs: 800,
  })
  for (let k = 0; k < chunks; k++) {
    write(1, k)
    for (let n = k < 20 ? 0 : take(k); n > 0 && ring.queued > 0; n--) ring.take(true)
  }
  return { ring, drops }
}

describe("the chunk ring's start, judged", () => {
  it('is given up at once when its backlog does not fall: down to the ordinary backlog, every chunk counted', () => {
    // Never catching up: one chunk taken for each that comes.
    const { ring, drops } = judged(() => 1, 40)
    // Until 2.4 s of audio after the first chunk the start holds its backlog (20 queued after the
    // stall), then drops down to the ordinary one at once.
    const at = drops.findIndex((d) => d > 0)
    expect(at).toBe(30)
    expect(drops[at]).toBe(16)
    expect(drops.slice(at + 1).every((d) => d === 0)).toBe(true)
    expect(ring.queued).toBeLessThanOrEqual(5)
  })

  it('is given up when its backlog falls too slowly to be down to the ordinary one by its end', () => {
    // One chunk more every 10 taken: the backlog falls by one chunk in 800 ms, 7 by the start's end.
    const { drops } = judged((k) => (k % 10 === 0 ? 2 : 1), 40)
    expect(drops.findIndex((d) => d > 0)).toBe(30)
  })

  it('holds while its backlog falls fast enough, and nothing is dropped', () => {
    // Two taken for each that comes: caught up within a second of audio.
    const { ring, drops } = judged(() => 2, 60)
    expect(drops.every((d) => d === 0)).toBe(true)
    expect(ring.queued).toBe(0)
  })
})
