import { type Speaker, speakerKey } from './pairing.js'

/**
 * The paired speakers where the service worker can read them: IndexedDB, which pages and workers
 * of one origin share (a worker has no localStorage). The page writes it at pairing and at every
 * start from localStorage, which stays the app's own record; the worker only reads it, to verify
 * a push with the phone's key and to sign the answer given on a notification. Same origin, same
 * browser profile as localStorage: nothing here is readable by anyone localStorage is hidden from.
 */
const DB_NAME = 'nocturn'
const STORE = 'speakers'

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1)
    req.onupgradeneeded = () => req.result.createObjectStore(STORE)
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => reject(req.error ?? new Error('IndexedDB cannot be opened'))
  })
}

async function withStore<T>(
  mode: IDBTransactionMode,
  work: (store: IDBObjectStore) => IDBRequest<T> | undefined,
): Promise<T | undefined> {
  const db = await open()
  try {
    return await new Promise<T | undefined>((resolve, reject) => {
      const tx = db.transaction(STORE, mode)
      const req = work(tx.objectStore(STORE))
      tx.oncomplete = () => resolve(req?.result)
      tx.onerror = () => reject(tx.error ?? new Error('IndexedDB transaction failed'))
      tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'))
    })
  } finally {
    db.close()
  }
}

/** Every speaker the worker may act for. */
export async function workerSpeakers(): Promise<Speaker[]> {
  return ((await withStore('readonly', (s) => s.getAll())) as Speaker[] | undefined) ?? []
}

/**
 * Makes the worker's copy the page's list: adds and replaces what is paired, and returns the
 * speakers that were in the copy but are no longer paired (forgotten), already deleted from it.
 */
export async function syncWorkerSpeakers(paired: readonly Speaker[]): Promise<Speaker[]> {
  const before = await workerSpeakers()
  const keep = new Set(paired.map(speakerKey))
  const gone = before.filter((s) => !keep.has(speakerKey(s)))
  await withStore('readwrite', (store) => {
    for (const s of gone) store.delete(speakerKey(s))
    for (const s of paired) store.put(s, speakerKey(s))
    return undefined
  })
  return gone
}
