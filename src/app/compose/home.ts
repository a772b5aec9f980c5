import type { ToolSet } from '../../core/tool-set.js'
import { HomeTools } from '../../home/home-tools.js'
import { ServerTools } from '../../home/server-tools.js'
import type { Composition } from './composition.js'

/** How soon the list is tried again while Home Assistant does not answer. */
const RETRY_MS = 15_000

/**
 * Home Assistant's exposed devices as tools in `tools`, behind the same gate, when
 * `homeAssistant` is configured. The first listing runs in the background: listening never waits
 * for HA, and a session opened before it lists simply has no home tools yet — unless
 * `listedFirst` (the offline run) waits for it.
 */
export async function composeHome(
  { config: c, clock, log, closers }: Composition,
  tools: ToolSet,
  listedFirst = false,
): Promise<HomeTools | undefined> {
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
  // Loaded only when configured: a speaker without HA never loads the MCP client or ws.
  const { openHome } = await import('./open-home.js')
  const home = openHome(ha.url, () => token, ha.timeoutSeconds * 1000)
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
  closers.add(async () => {
    homeTools.close()
    await home.close()
  })
  const first = homeTools.start()
  if (listedFirst) await first
  return homeTools
}

/** How often another MCP server's list is read again: it may have no change notice either. */
const SERVER_REFRESH_MS = 10 * 60_000

/**
 * The household's other MCP servers (`mcpServers`), their tools in `tools` behind the same gate,
 * each listed in the background like Home Assistant's.
 */
export async function composeMcpServers(
  { config: c, clock, log, closers }: Composition,
  tools: ToolSet,
): Promise<ServerTools[]> {
  if (c.mcpServers.length === 0) return []
  const { McpToolServer } = await import('../../adapters/mcp/mcp-tool-server.js')
  return c.mcpServers.map((m) => {
    const token = m.token
    const server = new McpToolServer({
      url: m.url,
      token: () => token ?? '',
      timeoutMs: 20_000,
      version: 'nocturn',
      anonymous: token === undefined,
    })
    const serverTools = new ServerTools({
      name: m.name,
      server,
      tools,
      policy: m.policy,
      perTool: m.tools,
      clock,
      logger: log.child({ component: 'mcp', server: m.name }),
      refreshMs: SERVER_REFRESH_MS,
      retryMs: RETRY_MS,
    })
    void serverTools.start()
    closers.add(async () => {
      serverTools.close()
      await server.close()
    })
    return serverTools
  })
}
