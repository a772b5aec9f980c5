import type { IncomingMessage, ServerResponse } from 'node:http'
import { phrase, phraseNames, SPEECH_RATE_HZ } from './speech.js'

/** A model as `GET /v1beta/models` lists it (REST names: `supportedGenerationMethods`). */
export interface FakeModel {
  readonly name: string
  readonly displayName?: string
  readonly supportedGenerationMethods: readonly string[]
}

export const DEFAULT_MODELS: readonly FakeModel[] = [
  live('gemini-3.8-live', 'Gemini 3.8 Live'),
  live('gemini-3.8-live-extended-thinking', 'Gemini 3.8 Live Extended Thinking'),
  live('gemini-3.1-flash-live-preview', 'Gemini 3.1 Flash Live Preview'),
  live('gemini-2.5-flash-native-audio-preview-12-2025', 'Gemini 2.5 Flash Native Audio'),
  live('gemini-3.5-live-translate-preview', 'Gemini 3.5 Live Translate'),
  {
    name: 'models/gemini-3.5-flash',
    displayName: 'Gemini 3.5 Flash',
    supportedGenerationMethods: ['generateContent', 'countTokens'],
  },
  {
    name: 'models/text-embedding-005',
    displayName: 'Text Embedding',
    supportedGenerationMethods: ['embedContent'],
  },
]

function live(id: string, displayName: string): FakeModel {
  return { name: `models/${id}`, displayName, supportedGenerationMethods: ['bidiGenerateContent'] }
}

/** One scripted `generateContent` answer. */
export interface GenerateAnswer {
  readonly text?: string | undefined
  readonly thought?: string | undefined
  readonly functionCalls?: readonly { id?: string; name: string; args?: unknown }[]
  /** Sent with every function call part, as Gemini 3 does. */
  readonly thoughtSignature?: string
}

export type GenerateStep = GenerateAnswer | ((body: Record<string, unknown>) => GenerateAnswer)

export interface RestRequest {
  readonly method: string
  readonly path: string
  readonly query: Record<string, string>
  readonly body: Record<string, unknown> | undefined
  /** Whether the API key header was present (its value is not recorded). */
  readonly hadKey: boolean
}

export interface RestState {
  readonly models: readonly FakeModel[]
  readonly generate: GenerateStep[]
  readonly requests: RestRequest[]
  readonly apiKey: string | undefined
}

/** The REST paths `doctor` and the LLM adapter use, answered as the service answers them. */
export async function handleRest(
  req: IncomingMessage,
  res: ServerResponse,
  state: RestState,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://fake')
  const path = url.pathname.replace(/\/{2,}/g, '/')
  const raw = await readBody(req)
  let body: Record<string, unknown> | undefined
  try {
    body = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined
  } catch {
    return json(res, 400, error(400, 'Invalid JSON payload received.', 'INVALID_ARGUMENT'))
  }
  const key = req.headers['x-goog-api-key']
  state.requests.push({
    method: req.method ?? 'GET',
    path,
    query: Object.fromEntries(url.searchParams),
    body,
    hadKey: typeof key === 'string' && key !== '',
  })
  if (state.apiKey !== undefined && key !== state.apiKey) {
    return json(
      res,
      400,
      error(400, 'API key not valid. Please pass a valid API key.', 'INVALID_ARGUMENT'),
    )
  }
  const m = /^\/(v1beta|v1alpha|v1)\/models(?:\/([^/:]+))?(?::(\w+))?$/.exec(path)
  if (!m) return json(res, 404, error(404, `no route for ${path}`, 'NOT_FOUND'))
  const [, , id, action] = m
  if (req.method === 'GET' && !id) return listModels(res, url, state.models)
  // Text to speech: any model named like Gemini's speech models (`…-tts`), answered with audio.
  if (req.method === 'POST' && action === 'generateContent' && /-tts$/.test(id ?? '')) {
    if (isSpeechRequest(body)) return json(res, 200, speechResponse(body ?? {}, id ?? ''))
    return json(res, 400, error(400, 'a speech model answers only with audio', 'INVALID_ARGUMENT'))
  }
  const model = state.models.find((x) => x.name === `models/${id}`)
  if (!model) {
    return json(
      res,
      404,
      error(404, `models/${id} is not found for API version v1beta`, 'NOT_FOUND'),
    )
  }
  if (req.method === 'GET' && !action) return json(res, 200, model)
  if (
    req.method === 'POST' &&
    (action === 'generateContent' || action === 'streamGenerateContent')
  ) {
    if (!model.supportedGenerationMethods.includes('generateContent')) {
      return json(
        res,
        404,
        error(404, `models/${id} is not supported for generateContent`, 'NOT_FOUND'),
      )
    }
    const step = state.generate.shift() ?? { text: '(the fake model has no more answers)' }
    const answer = typeof step === 'function' ? step(body ?? {}) : step
    if (action === 'generateContent') return json(res, 200, response(answer, id ?? ''))
    return sse(res, answer, id ?? '')
  }
  return json(res, 404, error(404, `no route for ${req.method} ${path}`, 'NOT_FOUND'))
}

/** A text-to-speech call: audio asked for as the response modality. */
function isSpeechRequest(body: Record<string, unknown> | undefined): boolean {
  const config = body?.generationConfig as { responseModalities?: unknown } | undefined
  return Array.isArray(config?.responseModalities) && config.responseModalities.includes('AUDIO')
}

/**
 * What the fake speech model "says" for `text`: a canned spoken phrase, so a test can find it
 * among the bytes that reached the speaker. Raw 24 kHz PCM, as Gemini's speech models answer.
 */
export function fakeSpeechPcm(_text: string): Buffer {
  return phrase(phraseNames()[0] as string).pcm
}

function speechResponse(body: Record<string, unknown>, model: string): Record<string, unknown> {
  const contents = body.contents as { parts?: { text?: string }[] }[] | undefined
  const text = contents?.[0]?.parts?.[0]?.text ?? ''
  const data = fakeSpeechPcm(text).toString('base64')
  return response({}, model, [
    { inlineData: { mimeType: `audio/L16;codec=pcm;rate=${SPEECH_RATE_HZ}`, data } },
  ])
}

function listModels(res: ServerResponse, url: URL, models: readonly FakeModel[]): void {
  const size = Math.max(1, Number(url.searchParams.get('pageSize') ?? 50) || 50)
  const start = Number(url.searchParams.get('pageToken') ?? 0) || 0
  const page = models.slice(start, start + size)
  const next = start + size < models.length ? String(start + size) : undefined
  json(res, 200, { models: page, ...(next ? { nextPageToken: next } : {}) })
}

function parts(a: GenerateAnswer): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  if (a.thought) out.push({ text: a.thought, thought: true })
  if (a.text) out.push({ text: a.text })
  for (const fc of a.functionCalls ?? []) {
    out.push({
      functionCall: { ...(fc.id ? { id: fc.id } : {}), name: fc.name, args: fc.args ?? {} },
      ...(a.thoughtSignature ? { thoughtSignature: a.thoughtSignature } : {}),
    })
  }
  return out
}

function response(a: GenerateAnswer, model: string, p = parts(a)): Record<string, unknown> {
  return {
    candidates: [{ content: { role: 'model', parts: p }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 },
    modelVersion: model,
    responseId: 'fake-response',
  }
}

/** The stream: text split at word boundaries over several events, calls in the last one. */
function sse(res: ServerResponse, a: GenerateAnswer, model: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' })
  const chunks: Record<string, unknown>[][] = []
  if (a.thought) chunks.push([{ text: a.thought, thought: true }])
  const words = (a.text ?? '').match(/\S+\s*/g) ?? []
  for (let i = 0; i < words.length; i += 3) chunks.push([{ text: words.slice(i, i + 3).join('') }])
  const calls = parts({ ...a, text: undefined, thought: undefined })
  if (calls.length > 0) chunks.push(calls)
  for (const c of chunks) res.write(`data: ${JSON.stringify(response(a, model, c))}\r\n\r\n`)
  res.end()
}

function error(code: number, message: string, status: string) {
  return { error: { code, message, status } }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' })
  res.end(JSON.stringify(body, null, 2))
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}
