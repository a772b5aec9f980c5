import { afterEach, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { McpToolServer } from '../../src/adapters/mcp/mcp-tool-server.js'
import { ConfigError } from '../../src/app/config/errors.js'
import { parseConfig } from '../../src/app/config/load.js'
import { ToolSet } from '../../src/core/tool-set.js'
import { ServerTools } from '../../src/home/server-tools.js'
import { FakeHomeAssistant } from '../../src/testing/fake-home-assistant/server.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { coreFixture } from '../helpers/core.js'

const TOKEN = 'other-server-token'
let ha: FakeHomeAssistant | undefined
let server: McpToolServer | undefined

afterEach(async () => {
  await server?.close()
  await ha?.stop()
})

async function world() {
  ha = await FakeHomeAssistant.start({ token: TOKEN })
  server = new McpToolServer({
    url: `${ha.url}/api/mcp`,
    token: () => TOKEN,
    timeoutMs: 2000,
    version: 't',
  })
  const log = new MemoryLogger()
  const tools = new ToolSet([
    {
      name: 'llm__GetDateTime',
      description: 'built-in',
      parameters: { type: 'object' },
      call: async () => 'mine',
    },
  ])
  const serverTools = new ServerTools({
    name: 'house',
    server,
    tools,
    policy: {},
    perTool: { homeassistant__GetLiveContext: { voice: 'allow' } },
    clock: realClock(),
    logger: log,
    refreshMs: 600_000,
    retryMs: 15_000,
  })
  const listed = await serverTools.refresh()
  return { tools, log, listed, core: coreFixture() }
}

describe('other MCP servers the household adds', () => {
  it('their tools sit behind the gate: voice asks by default, a tool’s own policy holds, a taken name is refused and logged', async () => {
    const w = await world()
    expect(w.listed.refused).toEqual(['llm__GetDateTime'])
    expect(w.log.withEvent('mcp_tool_name_taken')[0]?.fields).toMatchObject({
      server: 'house',
      tools: ['llm__GetDateTime'],
    })
    expect(w.tools.get('llm__GetDateTime')?.description).toBe('built-in')

    const asked = w.tools.call(w.core.ctx(), 'intent__HassTurnOn', { name: 'Kitchen Light' })
    while (w.core.approver.asked.length === 0) await settle()
    expect(w.core.approver.last().request.action).toBe(
      'use intent__HassTurnOn on house ({"name":"Kitchen Light"})',
    )
    w.core.approver.last().answer({ decision: 'approve', by: 'anna' })
    expect(await asked).toMatchObject({ ok: true })
    expect(ha?.house.entity('light.kitchen')?.state).toBe('on')

    const live = await w.tools.call(w.core.ctx(), 'homeassistant__GetLiveContext', {})
    expect(live.ok).toBe(true)
    expect(w.core.approver.asked).toHaveLength(1)
  })

  it('a server that is down is named in the sentence the model gets', async () => {
    const w = await world()
    await ha?.stop()
    const down = await w.tools.call(
      w.core.ctx({ channel: 'text', logger: w.log }),
      'homeassistant__GetLiveContext',
      {},
    )
    expect(down).toMatchObject({
      ok: false,
      error: "I can't reach house right now, so I did nothing.",
    })
    expect(w.log.withEvent('mcp_unreachable')).toHaveLength(1)
  })

  it('configuration: names unique, the token never in the file, read from NOCTURN_MCP_<NAME>_TOKEN', () => {
    const text = (servers: unknown) => JSON.stringify({ mcpServers: servers })
    const loaded = parseConfig(
      text([{ name: 'grocy', url: 'http://grocy.local:9283/mcp' }]),
      '/c.json',
      {
        NOCTURN_MCP_GROCY_TOKEN: TOKEN,
      },
    )
    expect(loaded.config.mcpServers[0]).toMatchObject({
      name: 'grocy',
      token: TOKEN,
      policy: {},
      tools: {},
    })
    let problems: string[] = []
    try {
      parseConfig(
        text([
          { name: 'grocy', url: 'http://a/mcp', token: TOKEN },
          { name: 'grocy', url: 'http://b/mcp' },
        ]),
        '/c.json',
        {},
      )
    } catch (err) {
      if (err instanceof ConfigError) problems = [...err.problems]
    }
    expect(problems.join('\n')).toMatch(
      /mcpServers\[0\]\.token: keep the token out of the config file: set NOCTURN_MCP_GROCY_TOKEN/,
    )
    expect(problems.join('\n')).toMatch(/mcpServers\[1\]\.name: "grocy" is used twice/)
    expect(problems.join('\n')).not.toContain(TOKEN)
  })
})
