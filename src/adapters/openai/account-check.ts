import { errorText } from '../../core/errors.js'
import { lookupOpenAICapabilities, type OpenAIModelCapabilities } from './capabilities.js'
import { createRestClient, redactKey } from './client.js'

interface RealtimeModel {
  readonly id: string
  readonly known: boolean
  readonly capabilities: OpenAIModelCapabilities
}

export interface OpenAIAccountReport {
  /** Every model the account lists. */
  readonly modelCount: number
  /** The realtime speech-to-speech models among them, with the capability table's view. */
  readonly realtimeModels: readonly RealtimeModel[]
}

/**
 * What the account can do live (`nocturn doctor`): `GET /v1/models`, the realtime models among
 * them, each with its row of the capability table — the documentation describes models an account
 * may not have, so the account is asked.
 */
export async function checkOpenAIAccount(o: {
  apiKey: string
  baseUrl?: string | undefined
}): Promise<OpenAIAccountReport> {
  try {
    const client = await createRestClient(o)
    const ids: string[] = []
    for await (const m of client.models.list()) ids.push(m.id)
    const realtimeModels = ids
      .filter((id) => /realtime/.test(id))
      .sort()
      .map((id) => {
        const { capabilities, known } = lookupOpenAICapabilities(id)
        return { id, known, capabilities }
      })
      .filter((m) => m.capabilities.realtime)
    return { modelCount: ids.length, realtimeModels }
  } catch (err) {
    throw new Error(redactKey(errorText(err), o.apiKey))
  }
}
