import type { Clock } from '../ports/clock.js'
import type { TranscriptStore } from '../ports/transcript-store.js'
import type { Gate } from './gate.js'
import type { Logger } from './logger.js'
import type { Persona } from './persona.js'
import type { ToolSet } from './tool-set.js'

/**
 * What both ways of talking are given, the same for typing and speech (docs/design.md §1): the
 * model (`LLM` for the turn loop, `LiveLLM` for the voice driver), the ToolSet, the gate, where the
 * transcript goes, the persona, the clock and the log.
 */
export interface TalkDeps<Model> {
  readonly llm: Model
  readonly tools: ToolSet
  readonly gate: Gate
  readonly store: TranscriptStore
  readonly persona: Persona
  readonly clock: Clock
  readonly logger: Logger
}
