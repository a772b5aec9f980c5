import type { MicGate } from '../../audio/mic-gate.js'
import { MicRouter } from '../../audio/mic-router.js'
import { SpeechDetector } from '../../audio/speech-detector.js'
import type { LiveConversations } from '../../conversations/live-conversations.js'
import type { ShownState } from '../../panel/shown-state.js'
import { SessionLoop } from '../../voice/session-loop.js'
import type { SessionSummary } from '../../voice/session-types.js'
import type { VoiceDriver } from '../../voice/voice-driver.js'
import type { Composition } from './composition.js'

/*
 * The listening chain, in the order a microphone frame travels it:
 *   microphone (MicGate) → MicRouter → the onset stage (SpeechDetector) → SessionLoop → VoiceDriver
 * The router gives the frames to the listening stages while no session runs, and to the session
 * while one does. A new stage (a wake word) is made in `composeListening`, between the detector
 * and the loop, and closed with the others.
 */

/** The microphone's router, its health (it hears nothing, it hears again) shown on the LED. */
export function routeMicrophone({ log }: Composition, mic: MicGate, shown: ShownState): MicRouter {
  return new MicRouter(mic, {
    onHealth: (h) => {
      if (!h.ok)
        log.warn(
          { event: 'microphone_hears_nothing', reason: h.reason },
          'microphone hears nothing',
        )
      else log.info({}, 'microphone hears again')
      shown.fault('microphone', h.ok ? undefined : h.reason)
    },
  })
}

interface ListeningDeps {
  readonly router: MicRouter
  readonly driver: VoiceDriver
  readonly live: LiveConversations
  readonly onSessionEnd?: ((summary: SessionSummary) => void) | undefined
}

/** The stages that decide when a spoken session opens; started by the caller once all is ready. */
export async function composeListening(
  { clock, log, closers }: Composition,
  { router, driver, live, onSessionEnd }: ListeningDeps,
): Promise<SessionLoop> {
  const detector = await SpeechDetector.create()
  closers.add(() => detector.close())
  return new SessionLoop({
    router,
    detector,
    driver,
    live,
    logger: log.child({ component: 'listen' }),
    clock,
    ...(onSessionEnd && { onSessionEnd }),
  })
}
