import type { ToolServer } from './tool-server.js'

/**
 * Home: the household's home automation (Home Assistant) as the speaker uses it — the tools it
 * offers the model (its `ToolServer` side), a copy of what it exposes, and the exact service calls
 * that carry out an approved action. Every method throws a `ServerFault` when the home cannot
 * answer.
 */
export interface Home extends ToolServer {
  /** What the home exposes: entities with names, aliases, areas, floors, device classes, states. */
  snapshot(signal?: AbortSignal): Promise<HomeSnapshot>
  /**
   * Calls `domain.service` on exactly these entity ids. Resolves when the home accepted it;
   * throws a `ServerFault` with the home's own reason when it refused.
   */
  callService(call: ServiceCall, signal?: AbortSignal): Promise<void>
  /** Resolves true when every entity's state satisfies `want` before `timeoutMs`, else false. */
  waitForStates(
    want: Readonly<Record<string, readonly string[]>>,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<boolean>
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
