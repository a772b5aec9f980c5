import { errorText, NocturnError } from '../../core/errors.js'

/** SQLite result codes that mean "this file cannot be written now", not "this request is wrong". */
function isUnwritable(err: unknown): boolean {
  const code = (err as { code?: unknown }).code
  return (
    typeof code === 'string' &&
    (code === 'SQLITE_FULL' ||
      code === 'SQLITE_PERM' ||
      code === 'SQLITE_CANTOPEN' ||
      code.startsWith('SQLITE_READONLY') ||
      code.startsWith('SQLITE_IOERR'))
  )
}

/**
 * Watches the store's writes while the appliance runs. The disk filling up or the file turning
 * read-only under a running Nocturn is not a bug to crash on: each failed write becomes one
 * `NOC_ERR_STORE_UNWRITABLE` error that says so plainly, and the listener hears once when writes
 * start failing and once when they work again, so the LED and the status can show it meanwhile.
 */
export class WriteHealth {
  readonly #path: string
  readonly #listeners: ((failing: string | undefined) => void)[] = []
  #failing: string | undefined

  constructor(path: string) {
    this.#path = path
  }

  listen(listener: (failing: string | undefined) => void): void {
    this.#listeners.push(listener)
  }

  run<T>(write: () => T): T {
    let result: T
    try {
      result = write()
    } catch (err) {
      if (!isUnwritable(err)) throw err
      const detail = errorText(err)
      const full = (err as { code?: string }).code === 'SQLITE_FULL'
      const reason = `cannot write the store at ${this.#path}: ${full ? 'the disk is full' : detail} — nothing new is being recorded`
      this.#set(reason)
      throw new NocturnError('NOC_ERR_STORE_UNWRITABLE', reason, { cause: err })
    }
    this.#set(undefined)
    return result
  }

  #set(failing: string | undefined): void {
    if (failing === this.#failing) return
    this.#failing = failing
    for (const l of this.#listeners) l(failing)
  }
}
