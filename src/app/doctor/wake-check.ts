import { existsSync, readFileSync } from 'node:fs'
import { quietNoise } from '../../audio/pcm.js'
import { errorText, isNocturnError } from '../../core/errors.js'
import { silentLogger } from '../../core/logger.js'
import type { Sensitivity } from '../../protocol/sensitivity.js'
import { coldPagesMarkFor, nativeMarkFor } from '../native-guard.js'
import {
  CANNOT_KEEP_UP_FIX,
  createWakeDetector,
  missingWakeFiles,
  thresholdAt,
  usedVerifier,
  wakeInstallFix,
  wakeModelPaths,
} from '../wake-detector.js'
import type { Check } from './check.js'
import type { DeviceDoctorContext } from './device-context.js'

/** Seconds of audio scored to see whether the detector keeps up. */
const PROBE_SECONDS = 5
/** Scoring that takes more than half of real time leaves the board no room for anything else. */
const BUSY_SHARE = 0.5

/**
 * listen.wake: the runtime loads, every model file is there and has openWakeWord's shapes, and
 * the detector scores a few seconds of audio faster than real time — measured, on this board.
 */
export const wakeCheck: Check<DeviceDoctorContext> = {
  name: 'wake word',
  async run(ctx) {
    const config = ctx.loaded?.config
    const wake = config?.listen.wake
    if (!config || !wake)
      return { status: 'skip', summary: 'no wake word configured (listen.wake)' }
    let missing: string[]
    try {
      missing = missingWakeFiles(wake)
    } catch (err) {
      return { status: 'fail', summary: errorText(err) }
    }
    if (missing.length > 0) {
      return {
        status: 'fail',
        summary: `missing model file${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
        details: [`fix: ${wakeInstallFix(wake)}`],
      }
    }
    const paths = wakeModelPaths(wake)
    // The service's own mark (app/native-guard.ts): a crash here leaves it, as the service's would.
    const mark = nativeMarkFor(config.store.path)
    const crashedBefore = existsSync(mark)
    const loadStart = performance.now()
    let detector: Awaited<ReturnType<typeof createWakeDetector>>
    try {
      detector = await createWakeDetector(wake, {
        onWake: () => {},
        logger: silentLogger,
        nativeMark: mark,
      })
    } catch (err) {
      return {
        status: 'fail',
        summary: errorText(err),
        data: { code: isNocturnError(err) ? err.code : undefined },
      }
    }
    const loadMs = performance.now() - loadStart
    try {
      // Quiet room noise, every chunk scored (no hint): the cost of a room where someone talks.
      const pcm = quietNoise(PROBE_SECONDS * 32_000, 200, 7)
      const cpu = process.cpuUsage()
      const start = performance.now()
      await detector.scoreRecorded(pcm)
      const wallMs = performance.now() - start
      const used = process.cpuUsage(cpu)
      const share = wallMs / (PROBE_SECONDS * 1000)
      const cpuMsPerSecond = (used.user + used.system) / 1000 / PROBE_SECONDS
      const data = {
        runtime: detector.runtime,
        phrases: detector.phrases,
        loadMs: Math.round(loadMs),
        shareOfRealTime: Number(share.toFixed(3)),
        cpuMsPerAudioSecond: Number(cpuMsPerSecond.toFixed(1)),
      }
      const verifiers = verifierLines(wake, paths)
      const summary = `${detector.phrases.map((p) => `"${p}"`).join(', ')} on the ${detector.runtime} runtime: loaded in ${data.loadMs} ms, scores ${PROBE_SECONDS} s of audio in ${(share * 100).toFixed(0)} % of real time (${data.cpuMsPerAudioSecond} ms CPU per second); ${verifiers.join('; ')}`
      if (crashedBefore) {
        return {
          status: 'warn',
          summary: `the native runtime crashed at an earlier start, so the speaker listens through WASM: ${summary}`,
          details: [
            `delete ${mark} to try the native runtime again (after an update); if it crashes again, the mark comes back and WASM is used`,
          ],
          data,
        }
      }
      if (share >= 1) {
        return {
          status: 'fail',
          summary: `the wake word cannot keep up on this board: ${summary}`,
          details: [
            `fix: ${CANNOT_KEEP_UP_FIX}, or the native runtime where the board has one (listen.wake.runtime "auto"); the speaker still listens, but sheds audio it cannot score`,
          ],
          data,
        }
      }
      if (share >= BUSY_SHARE) {
        return {
          status: 'warn',
          summary: `keeps up, barely: ${summary}`,
          details: [
            `the rest of the appliance shares what is left; if the status says the wake word cannot keep up: ${CANNOT_KEEP_UP_FIX}`,
          ],
          data,
        }
      }
      // The service's release of the runtime's cold code pages died once (compose/cold-pages.ts).
      const coldMark = coldPagesMarkFor(config.store.path)
      if (detector.runtime === 'native' && existsSync(coldMark)) {
        return {
          status: 'warn',
          summary: `the speaker died after giving back onnxruntime's cold code pages at an earlier start, so they stay resident (~17 MB): ${summary}`,
          details: [`delete ${coldMark} to give them back again (after an update)`],
          data,
        }
      }
      return { status: 'ok', summary, data }
    } finally {
      await detector.close()
    }
  },
}

/**
 * One line a phrase: its household verifier (loaded with the detector above, so it is valid) and
 * what enrolment measured, or that it has none; then the threshold it runs at, and where the
 * sensitivity moves it (a household tuning by phone sees what each choice means).
 */
function verifierLines(
  wake: NonNullable<NonNullable<DeviceDoctorContext['loaded']>['config']['listen']['wake']>,
  paths: ReturnType<typeof wakeModelPaths>,
): string[] {
  return paths.phrases.map((p, i) => {
    const at = (s: Sensitivity) => Number(thresholdAt(p.threshold, s, p.verified).toFixed(2))
    const threshold = `threshold ${at('normal')} (low ${at('low')}, high ${at('high')})`
    const file = usedVerifier(wake.models[i]?.verifier, p.verifier)
    if (!file) return `"${p.phrase}": no household verifier (nocturn wake enroll), ${threshold}`
    try {
      const e =
        (JSON.parse(readFileSync(file, 'utf8')) as { enrolment?: Record<string, unknown> })
          .enrolment ?? {}
      return `"${p.phrase}": household verifier ${file}, enrolled ${String(e.at)} from ${String(e.clips)} clips (${String(e.leaveOneOutAccepted)} accepted left out), ${threshold}`
    } catch (err) {
      return `"${p.phrase}": verifier ${file}: ${errorText(err)}`
    }
  })
}
