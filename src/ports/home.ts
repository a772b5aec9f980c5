/**
 * Home: the household's home automation (Home Assistant) as the speaker uses it — the tools it
 * offers the model, a copy of what it exposes, and the exact service calls that carry out an
 * approved action. Every method throws a `HomeFault` (below) when the home cannot answer.
 */
export interface Home {
  /** The tools the home offers right now, as it serves them (name, description, JSON schema). */
  listTools(signal?: AbortSignal): Promise<readonly HomeToolInfo[]>
  /** Runs one of the home's own tools with these arguments, as it would for its own assistant. */
  callTool(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<HomeToolReply>
  /** What the home exposes: entities with names, aliases, areas, floors, device classes, states. */
  snapshot(signal?: AbortSignal): Promise<HomeSnapshot>
  /**
   * Calls `domain.service` on exactly these entity ids. Resolves when the home accepted it;
   * throws a `HomeFault` with the home's own reason when it refused.
   */
  callService(call: ServiceCall, signal?: AbortSignal): Promise<void>
  /** Resolves true when every entity's state satisfies `want` before `timeoutMs`, else false. */
  waitForStates(
    want: Readonly<Record<string, readonly string[]>>,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<boolean>
}

export interface HomeToolInfo {
  readonly name: string
  readonly description: string
  /** As served: a JSON schema object (often outside the subset a model accepts). */
  readonly inputSchema: unknown
}

/** A tool's answer: its text, and whether the home reported it as an error. */
export interface HomeToolReply {
  readonly isError: boolean
  readonly text: string
}

export interface ServiceCall {
  readonly domain: string
  readonly service: string
  readonly entityIds: readonly string[]
  readonly data?: Readonly<Record<string, unknown>>
}

export interface HomeArea {
  readonly id: string
  readonly name: string
  readonly aliases: readonly string[]
  readonly floorId?: string | undefined
}

export interface HomeFloor {
  readonly id: string
  readonly name: string
  readonly aliases: readonly string[]
}

export interface HomeEntity {
  readonly entityId: string
  /** The friendly name the household sees. */
  readonly name: string
  readonly aliases: readonly string[]
  readonly domain: string
  readonly deviceClass?: string | undefined
  /** The entity's own area, or its device's. */
  readonly areaId?: string | undefined
  readonly state: string
}

/** The exposed part of the home at one moment. */
export interface HomeSnapshot {
  readonly entities: readonly HomeEntity[]
  readonly areas: readonly HomeArea[]
  readonly floors: readonly HomeFloor[]
}

/** Why the home could not answer, in a form the speaker can put into a sentence. */
export type HomeFaultKind = 'unreachable' | 'unauthorized' | 'timeout' | 'refused' | 'bad_answer'

export class HomeFault extends Error {
  override readonly name = 'HomeFault'
  constructor(
    readonly kind: HomeFaultKind,
    message: string,
  ) {
    super(message)
  }
}
