import { HaStates } from '../../adapters/home-assistant/home-assistant.js'
import { McpToolServer } from '../../adapters/mcp/mcp-tool-server.js'
import type { Home } from '../../ports/home.js'

/**
 * Home Assistant as the `Home` port: its Assist tools over its MCP endpoint (`/api/mcp`), its
 * entities and services over its WebSocket API (`/api/websocket`), both with the same token.
 */
export function openHome(
  url: string,
  token: () => string,
  timeoutMs: number,
): Home & { close(): Promise<void> } {
  const base = url.replace(/\/+$/, '')
  const tools = new McpToolServer({ url: `${base}/api/mcp`, token, timeoutMs, version: 'nocturn' })
  const states = new HaStates({ url: base, token, timeoutMs })
  return {
    listTools: (signal) => tools.listTools(signal),
    callTool: (name, args, signal) => tools.callTool(name, args, signal),
    snapshot: (signal) => states.snapshot(signal),
    callService: (call, signal) => states.callService(call, signal),
    waitForStates: (want, ms, signal) => states.waitForStates(want, ms, signal),
    close: async () => {
      states.close()
      await tools.close()
    },
  }
}
