import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { ColdPagesRelease } from '../../adapters/libc/cold-pages.js'
import type { OpenWakeWordDetector } from '../../adapters/openwakeword/detector.js'
import { NATIVE_LIBRARIES } from '../../adapters/openwakeword/runtime.js'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'

/**
 * Chunks (80 ms) scored after the embedding's streamed check before the release: 4 s of audio, so
 * the first runs' one-off work (each session's first run, the streamed parts' first windows) is
 * behind it and only what every chunk runs comes back.
 */
const SETTLE_CHUNKS = 50
/** Chunks scored after the release before its mark goes: 2 s of audio, every model run again. */
const SURVIVE_CHUNKS = 25

const MB = 1024

/**
 * Wake mode on the native runtime: once the detector's load has settled and no session runs
 * (`quiet`), gives back the pages of onnxruntime's library that the load touched once and scoring
 * never runs — ~24 MB resident after the load, 7.5 MB once scoring has faulted its own code in
 * again (bench/RESULTS.md, "cold code pages given back"). Only clean pages of the library's
 * read-only mappings go (adapters/libc/cold-pages.ts): the kernel keeps them in its page cache,
 * reclaimable, and a page used again comes back from there. The load is one-off: nothing later in the service makes a session (a re-taught verifier
 * and the sensitivity are scored in JavaScript on the same sessions), so it is done once.
 *
 * Guarded as the native runtime's first use is (app/native-guard.ts): the mark is left before the
 * release and removed once 2 s more audio went through the models (or the detector closed), so a
 * crash it caused would not restart the speaker into the same crash: a start that finds the mark
 * skips the release and says so. Where the release cannot be done (not Linux, koffi missing,
 * madvise refused) one info line says why, and the speaker listens as before.
 */
export async function giveBackColdPages(
  detector: Pick<OpenWakeWordDetector, 'runtime' | 'afterChunks'>,
  mark: string,
  log: Logger,
  quiet: () => Promise<void>,
): Promise<void> {
  // WASM maps no native library: its memory is the module's own, nothing to give back.
  if (detector.runtime !== 'native') return
  if (!(await detector.afterChunks(SETTLE_CHUNKS))) return
  // The release's steps hold the event loop (~30 ms here in all, more on a Pi), so not while a
  // session runs: the loop feeds the speaker's buffer then.
  await quiet()
  if (!(await detector.afterChunks(0))) return
  if (existsSync(mark)) {
    log.warn(
      { event: 'wake_release_crashed', since: readFileSync(mark, 'utf8').trim(), mark },
      `the speaker died after giving back onnxruntime's cold code pages at an earlier start: they stay resident (delete ${mark} to try again)`,
    )
    return
  }
  try {
    writeFileSync(mark, `${new Date().toISOString()}\n`)
  } catch (err) {
    // Unguarded it could crash-loop the speaker; ~17 MB is not worth that.
    log.info(
      { coldPages: 'kept', mark, err: errorText(err) },
      "onnxruntime's cold code pages stay resident: their release's mark cannot be left",
    )
    return
  }
  let r: ColdPagesRelease
  const began = performance.now()
  try {
    // A session begun while the release goes on (seconds, inside a quota) holds its next step.
    r = await releaseWithKoffi(NATIVE_LIBRARIES, quiet)
  } catch (err) {
    r = { released: false, why: errorText(err) }
  }
  if (!r.released) {
    rmSync(mark, { force: true })
    log.info(
      { coldPages: 'kept', why: r.why },
      `onnxruntime's cold code pages stay resident: ${r.why}`,
    )
    return
  }
  log.info(
    {
      coldPages: 'released',
      beforeMb: round(r.beforeKb / MB),
      afterMb: round(r.afterKb / MB),
      mappings: r.mappings,
      ...(r.refused && { refused: r.refused.mappings, why: r.refused.why }),
      // From its start to its end, in steps (adapters/libc/cold-pages.ts): koffi's import, smaps
      // read twice, one madvise a mapping, and any session a step waited for.
      tookMs: Math.round(performance.now() - began),
    },
    "gave back onnxruntime's cold code pages",
  )
  // True or false (closed first, which is no crash), the release did not take the process down.
  await detector.afterChunks(SURVIVE_CHUNKS)
  rmSync(mark, { force: true })
}

/** The adapter, imported only here: koffi is never loaded before a release is due. */
async function releaseWithKoffi(
  libraries: readonly string[],
  between: () => Promise<void>,
): Promise<ColdPagesRelease> {
  const { releaseColdPages } = await import('../../adapters/libc/cold-pages.js')
  return releaseColdPages(libraries, undefined, between)
}

function round(mb: number): number {
  return Math.round(mb * 10) / 10
}
