import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { WakeConfig } from './config/wake-schema.js'

type RuntimeChoice = WakeConfig['runtime']

/** The mark's place: beside the store, the one folder the service may always write. */
export function nativeMarkFor(storePath: string): string {
  return join(dirname(storePath), 'wake-native-starting')
}

/** The mark of the cold code pages' release (compose/cold-pages.ts), beside the other. */
export function coldPagesMarkFor(storePath: string): string {
  return join(dirname(storePath), 'wake-release-starting')
}

/**
 * A native library that crashes the process (a signal, not an exception) cannot be caught: under
 * systemd the speaker would restart into the same crash until systemd gives up, and then it
 * neither mutes nor shows its state. So the native wake-word runtime's first use leaves a mark
 * (beside the store), removed once the detector has loaded and scored its noise prefill, or has
 * failed with an error (a missing model is no crash). A start that finds the mark knows the last
 * one died there, and listens through WASM instead, saying so. The mark stays until someone
 * deletes it (after an update, say, to try the native runtime again).
 */
export function guardNativeRuntime(
  mark: string,
  choice: RuntimeChoice,
  log: Logger,
): { readonly runtime: RuntimeChoice; survived(): void } {
  const unguarded = { runtime: choice, survived() {} }
  if (choice === 'wasm') return unguarded
  if (existsSync(mark)) {
    log.warn(
      { event: 'wake_native_crashed', since: readFileSync(mark, 'utf8').trim(), mark, choice },
      `the native wake-word runtime crashed this speaker at an earlier start: listening through WASM (delete ${mark} to try the native one again)`,
    )
    return { runtime: 'wasm', survived() {} }
  }
  try {
    writeFileSync(mark, `${new Date().toISOString()}\n`)
  } catch (err) {
    // No mark, no guard: the wake word still listens.
    log.warn(
      { event: 'wake_native_mark_unwritable', mark, err: errorText(err) },
      'cannot leave the native runtime’s start mark: a crash in it would not be caught next time',
    )
    return unguarded
  }
  return { runtime: choice, survived: () => rmSync(mark, { force: true }) }
}
