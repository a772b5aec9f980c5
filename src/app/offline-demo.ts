import { realClock } from '../adapters/clock/real-clock.js'
import { ConsoleApprover } from '../adapters/console/console-approver.js'
import { SqliteStore } from '../adapters/sqlite/sqlite-store.js'
import { Gate } from '../core/gate.js'
import { Grants } from '../core/grants.js'
import type { Logger } from '../core/logger.js'
import { defaultPersona } from '../core/persona.js'
import { ToolSet } from '../core/tool-set.js'
import { DemoLock } from '../testing/demo-tools.js'
import { lastToolResults, ScriptedLLM } from '../testing/scripted-llm.js'
import { currentTimeTool } from '../tools/current-time.js'
import { TurnLoop } from '../turn/turn-loop.js'

export interface DemoOptions {
  readonly storePath: string
  readonly logger: Logger
  readonly out: NodeJS.WritableStream
  readonly input: NodeJS.ReadableStream
  readonly interactive: boolean
}

/**
 * The offline run, for now: a conversation that began by voice is continued by typing against the
 * scripted model, with an `ask` tool answered on the console. Prints a readable timeline.
 */
export async function runOfflineDemo(o: DemoOptions): Promise<number> {
  const clock = realClock()
  const store = new SqliteStore(o.storePath)
  try {
    const lock = new DemoLock()
    const tools = new ToolSet([currentTimeTool(clock), lock.tool()])
    const approver = new ConsoleApprover({
      input: o.input,
      output: o.out,
      interactive: o.interactive,
      autoAnswer: 'approve',
    })
    const gate = new Gate({
      policies: {},
      approver,
      grants: new Grants(store),
      clock,
      approvalTimeoutMs: 120_000,
    })
    const llm = new ScriptedLLM([
      {
        text: '',
        toolCalls: [
          { id: 'c1', name: 'current_time', args: {} },
          { id: 'c2', name: 'unlock_door', args: { door: 'front' } },
        ],
      },
      (req) => {
        const results = lastToolResults(req.history)
        const time = results.find((r) => r.toolName === 'current_time')
        const door = results.find((r) => r.toolName === 'unlock_door')
        const when = time?.outcome.ok ? (time.outcome.value as { local: string }).local : 'unknown'
        const doorText = door?.outcome.ok
          ? 'The front door is unlocked for the plumber.'
          : `I could not unlock it: ${door?.outcome.ok === false ? door.outcome.error : 'no answer'}`
        return { text: `It is ${when}. ${doorText}`, toolCalls: [] }
      },
    ])
    const loop = new TurnLoop({
      llm,
      tools,
      gate,
      store,
      persona: defaultPersona,
      clock,
      logger: o.logger,
    })
    const say = (who: string, text: string) => o.out.write(`${who.padEnd(10)} ${text}\n`)

    // What a spoken session leaves behind: an ordinary chat.
    const conv = store.createConversation({
      channel: 'voice',
      title: 'Front door',
      at: clock.now(),
    })
    for (const [role, text] of [
      ['user', 'Is the front door locked?'],
      ['assistant', 'Yes, the front door is locked.'],
    ] as const) {
      if (role === 'user') store.append(conv.id, { role, text, channel: 'voice', at: clock.now() })
      else store.append(conv.id, { role, text, toolCalls: [], channel: 'voice', at: clock.now() })
    }
    o.out.write(`conversation ${conv.id} (started by voice), store ${o.storePath}\n`)
    for (const m of store.messages(conv.id)) {
      if (m.role !== 'tool') say(m.role === 'user' ? '[voice]' : '[nocturn]', m.text)
    }
    const typed = 'What time is it? And please unlock the front door for the plumber.'
    say('[typed]', typed)
    const result = await loop.run({
      conversationId: conv.id,
      text: typed,
      channel: 'text',
      onPending: (n) => say('[gate]', `waiting for ${n.audience}: ${n.action}`),
      onToolResult: (call, outcome) =>
        say(
          '[tool]',
          `${call.name} ${outcome.ok ? `ok ${JSON.stringify(outcome.value)}` : `refused: ${outcome.error}`}`,
        ),
    })
    say('[nocturn]', result.text)
    o.out.write(`stored ${store.messages(conv.id).length} messages; door locked: ${lock.locked}\n`)
    return 0
  } finally {
    store.close()
  }
}
