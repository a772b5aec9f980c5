/**
 * Keeps the last few hundred characters a child wrote to stderr, made printable: the ALSA and GPIO
 * tools say why they failed there, and a misbehaving child may write anything at all to it.
 */
export class StderrTail {
  #text = ''
  readonly #max: number

  constructor(max = 600) {
    this.#max = max
  }

  push(chunk: Buffer): void {
    // latin1 never throws on arbitrary bytes; control characters become '?' so logs stay one line.
    const printable = chunk.toString('latin1').replace(/[^\n\x20-\x7e]/g, '?')
    this.#text = (this.#text + printable).slice(-this.#max)
  }

  /** The last non-empty line, or '' when nothing was written. */
  lastLine(): string {
    const lines = this.#text.split('\n').filter((l) => l.trim() !== '')
    return (lines[lines.length - 1] ?? '').trim()
  }

  get text(): string {
    return this.#text
  }

  clear(): void {
    this.#text = ''
  }
}
