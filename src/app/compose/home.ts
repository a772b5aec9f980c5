import { HomeAssistant } from '../../adapters/home-assistant/home-assistant.js'
import type { ToolSet } from '../../core/tool-set.js'
import { HomeTools } from '../../home/home-tools.js'
import type { Composition } from './composition.js'

/** How soon the list is tried again while Home Assistant does not answer. */
const RETRY_MS = 15_000

/**
 * Home Assistant's exposed devices as tools in `tools`, behind the same gate, when
 * `homeAssistant` is configured. The first listing runs in the background: listening never waits
 * for HA, and a session opened before it lists simply has no home tools yet.
 */
export function composeHome(
  { config: c, clock, log, closers }: Composition,
  tools: ToolSet,
): HomeTools | undefined {
  const ha = c.homeAssistant
  if (!ha) return undefined
  const token = ha.token
  if (!token) {
    log.warn(
      { event: 'home_no_token' },
      'homeAssistant is configured without a token: no home tools',
    )
    return undefined
  }
  const home = new HomeAssistant({
    url: ha.url,
    token: () => token,
    timeoutMs: ha.timeoutSeconds * 1000,
    version: 'nocturn',
  })
  const homeTools = new HomeTools({
    home,
    tools,
    policy: { ...ha.critical, safeScripts: ha.safeScripts },
    area: ha.area,
    clock,
    logger: log.child({ component: 'home-assistant' }),
    refreshMs: ha.refreshMinutes * 60_000,
    retryMs: RETRY_MS,
    confirmMs: ha.confirmSeconds * 1000,
  })
  void homeTools.start()
  closers.add(async () => {
    homeTools.close()
    await home.close()
  })
  return homeTools
}
