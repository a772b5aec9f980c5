/**
 * A map that forgets its oldest entries beyond `max`, so memory stays bounded whatever a broker
 * throws at us (nonces, settled ids, reply counters).
 */
export class BoundedMap<K, V> {
  readonly #max: number
  readonly #map = new Map<K, V>()

  constructor(max: number) {
    this.#max = max
  }

  get size(): number {
    return this.#map.size
  }

  get(key: K): V | undefined {
    return this.#map.get(key)
  }

  has(key: K): boolean {
    return this.#map.has(key)
  }

  set(key: K, value: V): void {
    this.#map.delete(key)
    this.#map.set(key, value)
    while (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next()
      if (oldest.done) break
      this.#map.delete(oldest.value)
    }
  }

  delete(key: K): boolean {
    return this.#map.delete(key)
  }

  /** Every value, oldest first; the map is left empty. */
  drain(): V[] {
    const values = [...this.#map.values()]
    this.#map.clear()
    return values
  }
}
