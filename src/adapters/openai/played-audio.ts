import type { DropReport } from '../../ports/audio.js'

/** 24 kHz, 16-bit mono: 48 bytes a millisecond. */
const BYTES_PER_MS = 48

export interface Truncation {
  readonly itemId: string
  /** What the room heard of the item's audio, from its start (`conversation.item.truncate`). */
  readonly audioEndMs: number
}

/**
 * The model's audio as this connection handed it to the speaker, item by item, so a drop can be
 * turned into `conversation.item.truncate`s: what the speaker discarded is the newest audio, so it
 * is taken off the newest items first (counting from the end, not from the speaker's played total,
 * keeps out whatever the speaker played before this connection — an earcon, an earlier session).
 */
export class PlayedAudio {
  #items: { id: string; bytes: number }[] = []

  delivered(itemId: string, bytes: number): void {
    const last = this.#items.at(-1)
    if (last?.id === itemId) last.bytes += bytes
    else {
      this.#items.push({ id: itemId, bytes })
      // Only the tail can ever be cut; a long session must not keep every item it spoke.
      if (this.#items.length > 32) this.#items.shift()
    }
  }

  /** The truncations a drop calls for, newest first; the record starts afresh (the speaker is empty). */
  cut(report: DropReport): Truncation[] {
    let discarded = report.discardedMs * BYTES_PER_MS
    const out: Truncation[] = []
    for (let i = this.#items.length - 1; i >= 0 && discarded > 0; i--) {
      const item = this.#items[i] as { id: string; bytes: number }
      const lost = Math.min(item.bytes, discarded)
      discarded -= lost
      out.push({ itemId: item.id, audioEndMs: Math.floor((item.bytes - lost) / BYTES_PER_MS) })
    }
    this.#items = []
    return out
  }
}
