import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { BACKUP_EVERY_MS, CHECKPOINT_EVERY_MS } from '../../src/adapters/sqlite/store-connection.js'
import { STORE_NOTICE_SHOWN_MS } from '../../src/app/compose/conversations.js'
import { numberIn, storePromise, storePromises } from '../helpers/store-promise.js'

const repo = join(import.meta.dirname, '../..')

/**
 * docs/store.md's table of faults is the store's promise in numbers: each number is the code's,
 * and each row names tests that exist (which read their limits from the same table).
 */
it('the table of faults says the numbers the code keeps, and names tests that exist', () => {
  const rows = storePromises()
  expect(rows.length).toBeGreaterThanOrEqual(10)
  for (const row of rows) {
    expect(row.tests.length, row.fault).toBeGreaterThan(0)
    for (const t of row.tests) expect(existsSync(join(repo, t)), t).toBe(true)
    // Every duration in the row is one the code keeps: the look (and checkpoint) every 2 s, the
    // copy and the notice's hour, and the stop's second.
    for (const m of `${row.lost} ${row.said}`.matchAll(/(\d+) (s|h)\b/g)) {
      expect(['2 s', '1 h', '1 s'], row.fault).toContain(m[0])
    }
  }
  const checkpointS = CHECKPOINT_EVERY_MS / 1000
  expect(numberIn(storePromise('Power cut').lost, /last (\d+) s of spoken/)).toBe(checkpointS)
  expect(numberIn(storePromise('The file deleted or replaced while').lost, /within (\d+) s/)).toBe(
    checkpointS,
  )
  expect(numberIn(storePromise('The file deleted, then').fault, /within (\d+) s/)).toBe(checkpointS)
  const hours = (ms: number) => ms / 3_600_000
  expect(numberIn(storePromise('The store missing').lost, /last (\d+) h/)).toBe(
    hours(BACKUP_EVERY_MS),
  )
  expect(numberIn(storePromise('The file deleted, and').lost, /every (\d+) h/)).toBe(
    hours(BACKUP_EVERY_MS),
  )
  expect(numberIn(storePromise('The file deleted or replaced while').said, /for (\d+) h/)).toBe(
    hours(STORE_NOTICE_SHOWN_MS),
  )
})
