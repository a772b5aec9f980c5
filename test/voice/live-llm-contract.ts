import { afterEach, describe, expect, it } from 'vitest'
import type { LiveLLM, LiveToolResponse } from '../../src/ports/live-llm.js'
import { liveSetup, recorder } from '../gemini/helpers.js'
import { until } from '../helpers/wait.js'

/**
 * One implementation of the LiveLLM port with its far side, as the contract needs it: open a
 * connection, have the far side call a tool or drop the connection, and read what reached it.
 */
export interface LiveWorld {
  readonly llm: LiveLLM
  /** The far side asks for tool call `id` on the newest connection. */
  toolCall(id: string): Promise<void>
  /** The far side ends the newest connection without a closing handshake. */
  drop(): Promise<void>
  /** Microphone bytes that reached the far side on the newest connection, once it is closed. */
  audioBytes(): Promise<number>
  /** Tool responses that reached the far side on the newest connection, once it is closed. */
  responses(): Promise<readonly { id?: unknown; willContinue?: unknown }[]>
  dispose(): Promise<void>
}

const answer = (id: string, interim = false): LiveToolResponse => ({
  id,
  name: 'current_time',
  response: interim ? { status: 'working' } : { output: '07:20' },
  ...(interim ? { willContinue: true, scheduling: 'WHEN_IDLE' as const } : {}),
})

/** What `docs` in src/ports/live-llm.ts promise about sends on an open and a closed connection. */
export function liveSessionContract(name: string, makeWorld: () => Promise<LiveWorld>): void {
  describe(`LiveSession contract: ${name}`, () => {
    let world: LiveWorld | undefined
    afterEach(async () => {
      await world?.dispose()
      world = undefined
    })

    it('open: audio and answers reach the far side as given', async () => {
      world = await makeWorld()
      const events = recorder()
      const s = await world.llm.open(liveSetup(), events)
      await world.toolCall('c1')
      await until(() => events.types().includes('toolCall'))
      s.sendAudio(new Uint8Array(640).fill(3))
      s.respond(answer('c1', true))
      s.respond(answer('c1'))
      await s.close()
      expect(await world.audioBytes()).toBe(640)
      expect((await world.responses()).map((r) => r.id)).toEqual(['c1', 'c1'])
    })

    it('closed by the far side: closed reported once; audio dropped without a throw; respond throws NOC_ERR_LIVE_CLOSED and sends nothing', async () => {
      world = await makeWorld()
      const events = recorder()
      const s = await world.llm.open(liveSetup(), events)
      await world.toolCall('c1')
      await until(() => events.types().includes('toolCall'))
      await world.drop()
      await until(() => events.types().includes('closed'))
      expect(events.log.filter((e) => e.type === 'closed')).toEqual([
        { type: 'closed', info: expect.objectContaining({ byClient: false }) },
      ])
      expect(() => s.sendAudio(new Uint8Array(640))).not.toThrow()
      expect(() => s.endAudio()).not.toThrow()
      expect(() => s.respond(answer('c1'))).toThrow(
        expect.objectContaining({ code: 'NOC_ERR_LIVE_CLOSED' }),
      )
      expect(await world.audioBytes()).toBe(0)
      expect(await world.responses()).toEqual([])
      await s.close()
    })

    it('closed by us: closed reported once, by the client; close again is harmless; nothing more is sent', async () => {
      world = await makeWorld()
      const events = recorder()
      const s = await world.llm.open(liveSetup(), events)
      await world.toolCall('c1')
      await until(() => events.types().includes('toolCall'))
      await s.close()
      await s.close()
      expect(events.log.filter((e) => e.type === 'closed')).toEqual([
        { type: 'closed', info: expect.objectContaining({ byClient: true }) },
      ])
      expect(() => s.sendAudio(new Uint8Array(640))).not.toThrow()
      expect(() => s.respond(answer('c1'))).toThrow(
        expect.objectContaining({ code: 'NOC_ERR_LIVE_CLOSED' }),
      )
      expect(await world.audioBytes()).toBe(0)
      expect(await world.responses()).toEqual([])
    })
  })
}
