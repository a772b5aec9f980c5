import type { GoogleGenAI } from '@google/genai'
import type { Logger } from '../../core/logger.js'
import {
  GuardedSocket,
  type SdkSocket,
  type SdkSocketCallbacks,
  type SocketHooks,
  type WebSocketClass,
} from './socket.js'

export interface ClientOptions {
  readonly apiKey: string
  /** e.g. `http://127.0.0.1:8790` for the fake server; the real service when absent. */
  readonly baseUrl?: string | undefined
}

const GEMINI_API_BASE_URL = 'https://generativelanguage.googleapis.com/'

/** The SDK's client, as `createClient` makes it. */
export type GenAI = GoogleGenAI

/**
 * A `GoogleGenAI` for the Gemini Developer API. The key and the base URL are always passed
 * explicitly: without a base URL the SDK takes `GOOGLE_GEMINI_BASE_URL` from the environment, and
 * a stray variable would send the key elsewhere. A `ws://` base is turned into `http://`: the SDK
 * rewrites every non-`http:` scheme to `wss://`, so a `ws://` base would fail TLS and leave
 * `connect()` waiting forever.
 *
 * The SDK is imported here, on first use, not when the appliance starts (docs/gemini.md, "Loading
 * the SDK"), and from its `web` entry: the same client, REST (global `fetch`) and Live code as the
 * Node entry, without the Node entry's google-auth-library, which it loads and instantiates even
 * for an API key. The web entry never reads the environment; Live runs over our transport anyway.
 */
export async function createClient(options: ClientOptions): Promise<GenAI> {
  const { GoogleGenAI: WebGenAI } = await import('@google/genai/web')
  const baseUrl = (options.baseUrl || GEMINI_API_BASE_URL)
    .replace(/^ws:/, 'http:')
    .replace(/^wss:/, 'https:')
  // The two entries declare the same classes twice; their private fields make TypeScript treat
  // them as unrelated, so the rest of the adapter keeps the main entry's types.
  return new WebGenAI({ apiKey: options.apiKey, httpOptions: { baseUrl } }) as unknown as GenAI
}

/**
 * Puts our own transport under `ai.live` (see GuardedSocket for why). `Live.webSocketFactory` is
 * private in the SDK's types, so this checks at runtime that the field is still there: an SDK
 * upgrade that renames it fails here, loudly, instead of silently using the unsafe transport.
 */
export function installGuardedTransport(
  ai: GenAI,
  options: {
    /** `loadWebSocket()`'s class: `ws` is loaded with the SDK, on first use. */
    WebSocket: WebSocketClass
    hooks: SocketHooks
    logger: Logger
    apiKey: string
    onSocket: (s: GuardedSocket) => void
  },
): void {
  const live = ai.live as unknown as Record<string, unknown>
  if (!('webSocketFactory' in live)) {
    throw new Error('@google/genai changed: Live.webSocketFactory is gone; update socket.ts')
  }
  live.webSocketFactory = {
    create(url: string, headers: Record<string, string>, sdk: SdkSocketCallbacks): SdkSocket {
      const socket = new GuardedSocket({ url, headers, sdk, ...options })
      options.onSocket(socket)
      return socket
    },
  }
}
