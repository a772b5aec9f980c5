import { errorText } from '../../core/errors.js'
import type { DeviceState } from '../../device/device-state.js'
import type { WakeLog } from '../../device/wake-log.js'
import type { WakeTeacher } from '../../ports/wake-teacher.js'
import type { WakeListener, WakeWordDetector } from '../../ports/wake-word.js'
import { listenMode } from '../config/schema.js'
import type { WakeConfig } from '../config/wake-schema.js'
import { coldPagesMarkFor, nativeMarkFor } from '../native-guard.js'
import { createWakeDetector, WAKE_CANNOT_KEEP_UP } from '../wake-detector.js'
import type { Composition } from './composition.js'

/** The wake detector, loading since early in the start; the wake stage takes it over. */
export interface WakeLoad {
  readonly config: WakeConfig
  readonly detector: Promise<WakeWordDetector>
  /** Where its detections go from now on (the wake stage, once it is made). */
  hear(listener: WakeListener): void
  /** Who is told how scoring takes its chunks from now on (the microphone's router). */
  batches(listener: BatchListener): void
  /**
   * Settles once the runtime's thread has been asked for every model, or the load failed before:
   * the start waits for this before it composes the rest, or the thread would start only at the
   * event loop's next turn, after that work (issue 47).
   */
  readonly asked: Promise<void>
}

/** Scoring takes chunks in batches of `everyMs` of audio, the next complete in `nextMs`. */
type BatchListener = (everyMs: number, nextMs: number) => void

/**
 * Begins loading the wake detector at once, in wake mode: its thread starts, the runtime is
 * imported, the models are read and the noise prefill is made on that thread while the event loop
 * composes the rest of the start (issue 47). Called once the panel has started, so the button never
 * waits for it, even where both share one core. A model runs only on the runtime's thread. A
 * failure is the wake stage's to report (listening.ts), as it was when the load began there.
 * Closed with the composition if the start stops before the stage takes it over.
 */
export function loadWake(
  { config: c, log, closers }: Composition,
  device: DeviceState,
  wakes: WakeLog | undefined,
): WakeLoad | undefined {
  if (listenMode(c.listen) !== 'wake' || !c.listen.wake) return undefined
  const config = c.listen.wake as WakeConfig
  const wakeLog = log.child({ component: 'wake' })
  let heard: WakeListener | undefined
  let batches: BatchListener | undefined
  // No session under way: the voice driver idle, or muted.
  const noSession = () => device.activity === 'idle' || device.activity === 'muted'
  let asked: () => void = () => {}
  const modelsAsked = new Promise<void>((resolve) => {
    asked = resolve
  })
  const detector = createWakeDetector(config, {
    // Said once the runtime's thread has every model to load: from here they load beside the rest.
    onAsked: () => {
      wakeLog.info({ runtime: config.runtime }, 'wake models loading')
      asked()
    },
    onWake: (d) => {
      wakes?.detected(d)
      heard?.(d)
    },
    logger: wakeLog,
    sensitivity: device.sensitivity,
    nativeMark: nativeMarkFor(c.store.path),
    // Scoring sheds load on a board too slow for it; the status and the LED say so, with the fix.
    onKeepingUp: (ok) => device.fault('wake word', ok ? undefined : WAKE_CANNOT_KEEP_UP),
    // Behind, scoring rests for a late event loop only while the loop carries a session.
    sessionOpen: () => !noSession(),
    onBatch: (everyMs, nextMs) => batches?.(everyMs, nextMs),
    ...(wakes && {
      teacher: {
        ready: (t: WakeTeacher) => wakes.useTeacher(t),
        sensitivity: () => device.sensitivity,
      },
    }),
  })
  // Answered where it is awaited; until then a failure is not an unhandled rejection.
  detector.catch(() => {}).finally(() => asked())
  // No session under way: when the cold pages may go.
  const quiet = () =>
    new Promise<void>((done) => {
      if (noSession()) return done()
      const off = device.subscribe(() => {
        if (!noSession()) return
        off()
        done()
      })
    })
  // Once the load has settled, what it touched once of the native runtime's code goes back.
  detector.then(
    (d) =>
      import('./cold-pages.js')
        .then((m) => m.giveBackColdPages(d, coldPagesMarkFor(c.store.path), wakeLog, quiet))
        .catch((err: unknown) =>
          wakeLog.warn(
            { event: 'wake_release_failed', err: errorText(err) },
            "onnxruntime's cold code pages could not be given back",
          ),
        ),
    () => {},
  )
  // The stage closes it too when it stops; a second close does nothing.
  closers.add(async () => (await detector.catch(() => undefined))?.close())
  return {
    config,
    detector,
    asked: modelsAsked,
    hear(listener) {
      heard = listener
    },
    batches(listener) {
      batches = listener
    },
  }
}
