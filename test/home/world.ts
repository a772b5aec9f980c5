import { realClock } from '../../src/adapters/clock/real-clock.js'
import { openHome } from '../../src/app/compose/open-home.js'
import { silentLogger } from '../../src/core/logger.js'
import { ToolSet } from '../../src/core/tool-set.js'
import type { Tool } from '../../src/core/types.js'
import { type CriticalPolicy, DEFAULT_CRITICAL_POLICY } from '../../src/home/criticality.js'
import { HomeTools } from '../../src/home/home-tools.js'
import type { Clock } from '../../src/ports/clock.js'
import type { ToolNaming } from '../../src/testing/fake-home-assistant/assist-tools.js'
import type { FakeHouse } from '../../src/testing/fake-home-assistant/house.js'
import { FakeHomeAssistant } from '../../src/testing/fake-home-assistant/server.js'

const HA_TOKEN = 'ha-token-not-for-logs'

export interface HomeWorldOptions {
  readonly naming?: ToolNaming
  readonly area?: string
  readonly policy?: Partial<CriticalPolicy>
  readonly builtIns?: Tool[]
  readonly confirmMs?: number
  readonly timeoutMs?: number
  readonly house?: FakeHouse
  readonly clock?: Clock
}

/** The stand-in HA, the real adapter on it, and its tools in a ToolSet beside `builtIns`. */
export async function homeWorld(o: HomeWorldOptions = {}) {
  const ha = await FakeHomeAssistant.start({
    token: HA_TOKEN,
    naming: o.naming ?? '2026.9',
    ...(o.house && { house: o.house }),
  })
  const home = openHome(ha.url, () => HA_TOKEN, o.timeoutMs ?? 2000)
  const tools = new ToolSet(o.builtIns ?? [])
  const homeTools = new HomeTools({
    home,
    tools,
    policy: { ...DEFAULT_CRITICAL_POLICY, ...o.policy },
    area: o.area ?? 'Kitchen',
    clock: o.clock ?? realClock(),
    logger: silentLogger,
    refreshMs: 300_000,
    retryMs: 15_000,
    confirmMs: o.confirmMs ?? 2000,
  })
  const listed = await homeTools.refresh()
  return {
    ha,
    home,
    tools,
    homeTools,
    listed,
    async close() {
      homeTools.close()
      await home.close()
      await ha.stop()
    },
  }
}
