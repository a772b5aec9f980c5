import { z } from 'zod'

const policy = z.enum(['allow', 'ask', 'deny'])
const channelPolicies = z.strictObject({ voice: policy.optional(), text: policy.optional() })

/**
 * `mcpServers`: other MCP servers (Streamable HTTP) whose tools the household adds beside the
 * built-in and Home Assistant's, behind the same gate (docs/home-assistant.md, "Other MCP
 * servers"). A token, when the server needs one, is a secret: NOCTURN_MCP_<NAME>_TOKEN (or …_FILE),
 * the credential `mcp-<name>-token`, or `tokenFile` — never written here.
 */
export const mcpServerSchema = z.strictObject({
  /** The household's name for it: in logs, on the phone's card and in what the model says. */
  name: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,30}$/, 'lower-case letters, digits and -, e.g. "grocy"'),
  url: z.url({ protocol: /^https?$/ }),
  /** Filled from the environment, a credential or `tokenFile`. */
  token: z.string().optional(),
  tokenFile: z.string().min(1).optional(),
  /** Every tool's policy; voice asks a phone unless this says otherwise. */
  policy: channelPolicies.default({}),
  /** Per tool, by its name as the server serves it. */
  tools: z.record(z.string(), channelPolicies).default({}),
})

/** The environment variable that holds a server's token: NOCTURN_MCP_GROCY_TOKEN for "grocy". */
export function mcpTokenEnv(name: string): string {
  return `NOCTURN_MCP_${name.toUpperCase().replace(/-/g, '_')}_TOKEN`
}
