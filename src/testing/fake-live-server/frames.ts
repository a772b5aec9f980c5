/**
 * Server frames exactly as the live service writes them: lowerCamelCase keys, int64 counts as
 * JSON strings where the proto says int64, durations as strings ("50s"), audio as base64 s16le at
 * 24 kHz labelled `audio/pcm;rate=24000`.
 */
export type ServerFrame = Record<string, unknown>

const OUTPUT_MIME = 'audio/pcm;rate=24000'

export const serverFrame = {
  setupComplete: (): ServerFrame => ({ setupComplete: {} }),
  audio: (pcm: Uint8Array, mimeType = OUTPUT_MIME): ServerFrame => ({
    serverContent: {
      modelTurn: {
        parts: [{ inlineData: { mimeType, data: Buffer.from(pcm).toString('base64') } }],
      },
    },
  }),
  inputTranscription: (text: string, finished?: boolean): ServerFrame => ({
    serverContent: { inputTranscription: finished === undefined ? { text } : { text, finished } },
  }),
  outputTranscription: (text: string): ServerFrame => ({
    serverContent: { outputTranscription: { text } },
  }),
  interrupted: (): ServerFrame => ({ serverContent: { interrupted: true } }),
  generationComplete: (): ServerFrame => ({ serverContent: { generationComplete: true } }),
  turnComplete: (totalTokens?: number): ServerFrame => ({
    serverContent: { turnComplete: true },
    ...(totalTokens === undefined ? {} : { usageMetadata: usage(totalTokens) }),
  }),
  toolCall: (calls: readonly { id?: string; name: string; args?: unknown }[]): ServerFrame => ({
    toolCall: { functionCalls: calls.map((c) => ({ ...c, args: c.args ?? {} })) },
  }),
  cancellation: (ids: readonly string[]): ServerFrame => ({ toolCallCancellation: { ids } }),
  /** `null`: a goAway without `timeLeft` (malformed, but seen in the field). */
  goAway: (timeLeft: string | null = '50s'): ServerFrame => ({
    goAway: timeLeft === null ? {} : { timeLeft },
  }),
  resumption: (newHandle: string, resumable = true): ServerFrame => ({
    sessionResumptionUpdate: resumable ? { newHandle, resumable } : { newHandle: '', resumable },
  }),
  usage: (totalTokens: number): ServerFrame => ({ usageMetadata: usage(totalTokens) }),
}

function usage(total: number) {
  const prompt = Math.ceil(total * 0.9)
  return {
    promptTokenCount: prompt,
    responseTokenCount: total - prompt,
    totalTokenCount: total,
    promptTokensDetails: [{ modality: 'AUDIO', tokenCount: prompt }],
    responseTokensDetails: [{ modality: 'AUDIO', tokenCount: total - prompt }],
  }
}

/** The 1008 reason the service gives for an unknown model, cut to the 123 bytes a close allows. */
export function unknownModelReason(model: string, apiVersion = 'v1beta'): string {
  const full = `${model} is not found for API version ${apiVersion}, or is not supported for bidiGenerateContent. Call ModelService.ListModels to see the list of available models and their supported methods.`
  return truncateReason(full)
}

export function truncateReason(reason: string): string {
  const b = Buffer.from(reason, 'utf8')
  return b.length <= 123
    ? reason
    : b
        .subarray(0, 123)
        .toString('utf8')
        .replace(/\uFFFD$/, '')
}

/**
 * Raw frames no service should send, one of each kind a client must survive: not JSON, JSON that
 * is not an object, a tool call without a name, a tool call whose calls are not a list, and
 * `goAway`s whose time left cannot be read. Each must cost itself only.
 */
export const MALFORMED_FRAMES: readonly string[] = [
  'this is not json {',
  '[1, 2, 3]',
  '"a string"',
  'null',
  JSON.stringify({ toolCall: { functionCalls: [{ id: 'no-name', args: {} }] } }),
  JSON.stringify({ toolCall: { functionCalls: 'not a list' } }),
  JSON.stringify({ goAway: { timeLeft: 'soon' } }),
  JSON.stringify({ goAway: 'not an object' }),
]
