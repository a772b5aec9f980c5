import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'

/** What each provider's models are made from (its adapter's `models.ts`), whatever the provider. */
export interface ModelsOptions {
  readonly apiKey: string
  /** The live (speech-to-speech) model. */
  readonly model: string
  /** The typed-chat model. */
  readonly textModel: string
  /** The text-to-speech model announcements are said with. */
  readonly speechModel: string
  readonly baseUrl?: string | undefined
  readonly logger: Logger
  readonly clock: Clock
}
