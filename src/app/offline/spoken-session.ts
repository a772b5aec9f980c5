import type { SessionSummary } from '../../voice/session-types.js'
import type { WatchedAppliance } from './appliance-in-house.js'
import type { House } from './house.js'

/**
 * Waits out the spoken session. It is over when the scene is played and the button pressed — or
 * earlier, if it ended by itself (an error), which the checks then report. Then the driver stops
 * it; `budgetMs` guards against a hang.
 */
export async function playSpokenSession(
  { appliance, sessionEnded, buttonDone }: WatchedAppliance,
  { model }: House,
  seen: { readonly mutePressed: boolean },
  budgetMs: number,
): Promise<SessionSummary> {
  let sessionOver = false
  void sessionEnded.then(() => {
    sessionOver = true
  })
  const sceneOver = model
    .until(() => model.finished() || sessionOver, budgetMs)
    .then(() => (seen.mutePressed && !sessionOver ? buttonDone : undefined))
    .then(() => appliance.driver.stop())
  return withTimeout(
    Promise.race([sessionEnded, sceneOver.then(() => sessionEnded)]),
    budgetMs,
    'the spoken session',
  )
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`${what} did not finish within ${ms / 1000} s`)), ms)
    p.then(
      (v) => {
        clearTimeout(t)
        res(v)
      },
      (e: unknown) => {
        clearTimeout(t)
        rej(e)
      },
    )
  })
}
