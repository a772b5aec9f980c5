import { describe, expect, it } from 'vitest'
import { MicGate } from '../../src/audio/mic-gate.js'
import { defaultPersona } from '../../src/core/persona.js'
import { ToolSet } from '../../src/core/tool-set.js'
import { FakeLiveLLM } from '../../src/testing/fake-live-llm.js'
import { FakeSpeaker } from '../../src/testing/fake-speaker.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { VoiceDriver } from '../../src/voice/voice-driver.js'
import { coreFixture } from '../helpers/core.js'
import { doorTool, TestMic } from './harness.js'

describe('the scripted fake LiveLLM, as the offline run uses it', () => {
  it('a script plays the provider side of a whole session, waiting on the driver where it must', async () => {
    const core = coreFixture({ timeoutMs: 120_000 })
    const unlocked: string[] = []
    const speaker = new FakeSpeaker(core.clock)
    const llm = new FakeLiveLLM({
      clock: core.clock,
      onOpen: (conn) =>
        void conn.play(
          [
            { handle: 'h-1' },
            { user: 'Unlock the front door.' },
            { toolCall: [{ id: 'c1', name: 'unlock_door', args: { door: 'front' } }] },
            { awaitResponse: 'c1', interim: true },
            { model: 'I have asked Anna.' },
            { audioMs: 800 },
            { turnComplete: true },
            { awaitResponse: 'c1' },
            { model: 'The front door is open.' },
            { audioMs: 600 },
            { generationComplete: true },
            { turnComplete: true },
          ],
          core.clock,
        ),
    })
    const driver = new VoiceDriver({
      llm,
      tools: new ToolSet([doorTool(unlocked)]),
      gate: core.gate,
      store: core.store,
      persona: defaultPersona,
      clock: core.clock,
      logger: new MemoryLogger(),
      mic: new MicGate({
        source: new TestMic(),
        speaker,
        clock: core.clock,
        echo: 'gate',
        tailMs: 300,
      }),
      speaker,
      options: { idleMs: 5_000 },
    })
    const done = driver.runSession()
    await core.clock.advance(3_000)
    core.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await core.clock.advance(10_000)
    const summary = await done
    expect(summary).toMatchObject({
      reason: 'idle',
      turns: 2,
      calls: { answered: 1, withdrawn: 0 },
    })
    expect(unlocked).toEqual(['front'])
    expect(speaker.playedBytes()).toBe(1400 * 48)
    // Each reply's end reached the speaker once it was known (generationComplete or, where a
    // model sends none, turnComplete), so a device can play out its last period at once.
    expect(speaker.endsOfReply).toBe(3)
    expect(core.store.messages(summary.conversationId).map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'assistant',
      'tool',
      'assistant',
    ])
  })
})
