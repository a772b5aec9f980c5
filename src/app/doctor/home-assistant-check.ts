import { errorText } from '../../core/errors.js'
import { criticalEntities } from '../../home/critical-list.js'
import { ServerFault } from '../../ports/tool-server.js'
import { openHome } from '../compose/open-home.js'
import type { Check, CheckResult } from './check.js'
import type { DeviceDoctorContext } from './device-context.js'

/** Long enough for a Pi's HA on the LAN, short enough that doctor never seems to hang. */
const TIMEOUT_MS = 8000

/**
 * Home Assistant, as the speaker will use it: the URL answers, the token is taken, how many tools
 * and exposed entities there are, which exposed entities a phone must approve under the current
 * policy, and which exposed scripts are not marked safe.
 */
export const homeAssistantCheck: Check<DeviceDoctorContext> = {
  name: 'home assistant',
  async run(ctx): Promise<CheckResult> {
    const ha = ctx.loaded?.config.homeAssistant
    if (!ha) return { status: 'skip', summary: 'not configured (homeAssistant)' }
    if (!ha.token) {
      return {
        status: 'fail',
        summary:
          'no access token: set NOCTURN_HA_TOKEN, the credential "ha-token" or homeAssistant.tokenFile',
      }
    }
    const token = ha.token
    const home = openHome(ha.url, () => token, TIMEOUT_MS)
    try {
      const [tools, snapshot] = await Promise.all([home.listTools(), home.snapshot()])
      const policy = { ...ha.critical, safeScripts: ha.safeScripts }
      const critical = criticalEntities(snapshot, policy)
      const unsafeScripts = snapshot.entities
        .filter((e) => e.domain === 'script' && !ha.safeScripts.includes(e.entityId))
        .map((e) => e.entityId)
      const areaName = (id?: string) => snapshot.areas.find((a) => a.id === id)?.name
      const details = [
        ...critical.map(
          ({ entity: e, verbs }) =>
            `a phone's yes to ${verbs.join('/').toLowerCase()}: ${e.name}${areaName(e.areaId) ? ` — ${areaName(e.areaId)}` : ''} (${e.entityId})`,
        ),
        unsafeScripts.length > 0
          ? `scripts not marked safe (each run asks a phone; list safe ones in homeAssistant.safeScripts): ${unsafeScripts.join(', ')}`
          : 'no exposed script runs without a phone’s yes',
      ]
      const area =
        ha.area &&
        !snapshot.areas.some(
          (a) => a.name.toLowerCase() === ha.area?.toLowerCase() || a.id === ha.area,
        )
      return {
        status: tools.length === 0 || area ? 'warn' : 'ok',
        summary:
          tools.length === 0
            ? `${ha.url} answers, but offers no tools: expose entities to Assist (Settings → Voice assistants → Expose)`
            : area
              ? `${tools.length} tools, ${snapshot.entities.length} exposed entities; but there is no area "${ha.area}" — check homeAssistant.area`
              : `${tools.length} tools, ${snapshot.entities.length} exposed entities, ${critical.length} of them critical`,
        details,
        data: {
          url: ha.url,
          tools: tools.length,
          entities: snapshot.entities.length,
          critical: critical.map((c) => c.entity.entityId),
          unsafeScripts,
        },
      }
    } catch (err) {
      const kind = err instanceof ServerFault ? err.kind : 'bad_answer'
      const fix: Record<string, string> = {
        unreachable: `cannot reach ${ha.url}: check homeAssistant.url and that Home Assistant is running, with the MCP Server integration added`,
        unauthorized:
          "Home Assistant refused the token: make a new long-lived token for the speaker's HA user and put it where NOCTURN_HA_TOKEN / ha-token / tokenFile points",
        timeout: `${ha.url} did not answer within ${TIMEOUT_MS / 1000} s`,
      }
      return {
        status: 'fail',
        summary:
          fix[kind] ?? `Home Assistant answered in a way the speaker cannot use: ${errorText(err)}`,
      }
    } finally {
      await home.close()
    }
  },
}
