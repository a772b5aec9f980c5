/**
 * ToolServer: a server of tools the model may use over MCP — Home Assistant's Assist API, or one
 * the household adds — listing them as the server serves them and calling one. Every method throws
 * a `ServerFault` (below) when the server cannot answer.
 */
export interface ToolServer {
  /** The tools the server offers right now, as it serves them (name, description, JSON schema). */
  listTools(signal?: AbortSignal): Promise<readonly ToolInfo[]>
  /** Runs one of the server's tools with these arguments. */
  callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolReply>
}

export interface ToolInfo {
  readonly name: string
  readonly description: string
  /** As served: a JSON schema object (often outside the subset a model accepts). */
  readonly inputSchema: unknown
}

/** A tool's answer: its text, and whether the server reported it as an error. */
export interface ToolReply {
  readonly isError: boolean
  readonly text: string
}

/** Why the server could not answer, in a form the speaker can put into a sentence. */
export type ServerFaultKind = 'unreachable' | 'unauthorized' | 'timeout' | 'refused' | 'bad_answer'

export class ServerFault extends Error {
  override readonly name = 'ServerFault'
  constructor(
    readonly kind: ServerFaultKind,
    message: string,
  ) {
    super(message)
  }
}
