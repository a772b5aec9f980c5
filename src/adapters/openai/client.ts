import { createConnection } from 'node:net'
import type { OpenAIRealtimeWS } from 'openai/realtime/ws'

/** The service's REST and WebSocket base when the config names none. */
const OPENAI_BASE_URL = 'https://api.openai.com/v1'

export interface RealtimeSocketOptions {
  readonly apiKey: string
  readonly model: string
  /** `http://127.0.0.1:PORT/v1` for the fake service; the real one when absent. */
  readonly baseUrl?: string | undefined
}

/**
 * The SDK's realtime WebSocket client (`openai/realtime/ws`, on `ws`), imported on first use: the
 * package loads its whole REST client with it (about 200 ms and 19 MB of RSS here), which an
 * appliance that only listens never needs. The base URL is always passed (the SDK's own client
 * would read `OPENAI_BASE_URL` from the environment and send the key there). The SDK always turns
 * the base into `wss:`; for a plain `http:` base (the local fake) the socket is made over plain
 * TCP instead, the one thing the SDK cannot be told.
 */
export async function openRealtimeSocket(o: RealtimeSocketOptions): Promise<OpenAIRealtimeWS> {
  const { OpenAIRealtimeWS } = await import('openai/realtime/ws')
  const baseURL = o.baseUrl || OPENAI_BASE_URL
  const plain = baseURL.startsWith('http:') || baseURL.startsWith('ws:')
  return new OpenAIRealtimeWS(
    { model: o.model, ...(plain ? { options: { createConnection } } : {}) },
    { apiKey: o.apiKey, baseURL: baseURL.replace(/^ws:/, 'http:').replace(/^wss:/, 'https:') },
  )
}

/** The SDK's REST client for typed chats and speech, imported on first use (see above). */
export async function createRestClient(o: { apiKey: string; baseUrl?: string | undefined }) {
  const { default: OpenAI } = await import('openai')
  return new OpenAI({ apiKey: o.apiKey, baseURL: o.baseUrl || OPENAI_BASE_URL, maxRetries: 1 })
}

export type RestClient = Awaited<ReturnType<typeof createRestClient>>

/** The key never leaves in a message we log or throw. */
export function redactKey(text: string, apiKey: string | undefined): string {
  return apiKey && apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text
}
