import {
  DeviceRefusal,
  type PhoneConversations,
  type WireMessage,
} from '../../phone/conversations.js'
import type { GrantSummary } from '../../protocol/grant-ops.js'
import type { Io } from './pair.js'

const CONVERSATION_VERBS = ['conversations', 'show', 'say', 'follow', 'grants', 'revoke'] as const
export type ConversationVerb = (typeof CONVERSATION_VERBS)[number]

export function isConversationVerb(v: string | undefined): v is ConversationVerb {
  return (CONVERSATION_VERBS as readonly string[]).includes(v ?? '')
}

/**
 * The conversation verbs of `nocturn phone`: list, read, type into and follow this device's
 * conversations, as a phone app would. Refusals from the device are printed with their code.
 */
export async function conversationVerb(
  client: PhoneConversations,
  verb: ConversationVerb,
  rest: string[],
  io: Io,
  opts: { limit?: number; signal?: AbortSignal },
): Promise<number> {
  try {
    switch (verb) {
      case 'conversations': {
        const { conversations } = await client.list({ limit: opts.limit ?? 20 })
        for (const c of conversations) {
          const when = new Date(c.updatedAt).toISOString()
          const typed = c.typedBy?.length ? `  (typed by ${c.typedBy.join(', ')})` : ''
          io.out.write(`${c.id}  ${c.channel.padEnd(5)}  ${when}  ${c.summary}${typed}\n`)
        }
        return 0
      }
      case 'show': {
        const [id] = rest
        if (!id) return usage(io)
        for (const m of await client.showAll(id)) io.out.write(`${line(m)}\n`)
        return 0
      }
      case 'say': {
        const [id, text] = rest
        if (!id || text === undefined) return usage(io)
        const r = await client.say(id, text, {
          onPart: (t) => io.out.write(t),
          onPending: (p) =>
            io.err.write(
              `\n(waiting for approval on ${String(p.audience)}: ${String(p.action)})\n`,
            ),
        })
        io.out.write(`\n(conversation ${r.conversation})\n`)
        return 0
      }
      case 'grants': {
        for (const g of await client.grants()) io.out.write(`${grantLine(g)}\n`)
        return 0
      }
      case 'revoke': {
        const [id] = rest
        if (!id) return usage(io)
        await client.revoke(id)
        io.out.write(`revoked ${id}\n`)
        return 0
      }
      case 'follow': {
        const target = rest[0] ?? '*'
        const f = await client.follow(target, (e) => {
          const b = e.body
          if (e.kind === 'message') {
            io.out.write(`${String(b.conversation)}  ${line(b.message as WireMessage)}\n`)
          } else {
            io.out.write(
              `${String(b.conversation)}  approval ${String(b.state)}: ${String(b.action)}${b.by ? ` by ${String(b.by)}` : ''}\n`,
            )
          }
        })
        await new Promise<void>((resolve) => {
          const stop = () => resolve()
          opts.signal?.addEventListener('abort', stop, { once: true })
          process.once('SIGINT', stop)
          process.once('SIGTERM', stop)
        })
        await f.stop()
        return 0
      }
    }
  } catch (err) {
    if (err instanceof DeviceRefusal) {
      io.err.write(`nocturn phone: the speaker refused (${err.code}): ${err.message}\n`)
      return 1
    }
    throw err
  }
}

/** One stored message, as the device's own `nocturn transcripts show` prints it. */
function line(m: WireMessage): string {
  let body: string
  if (m.truncated === true) body = '(too long to send)'
  else if (m.role === 'tool') {
    const o = m.outcome as { ok: boolean; value?: unknown; error?: string }
    body = `${String(m.toolName)} → ${o.ok ? JSON.stringify(o.value) : o.error}`
  } else {
    const calls = (m.toolCalls as { name: string }[] | undefined) ?? []
    const text = String(m.text ?? '')
    body =
      calls.length > 0
        ? `${text}${text ? ' ' : ''}(calls ${calls.map((c) => c.name).join(', ')})`
        : text
  }
  return `${String(m.seq).padStart(4)} ${String(m.channel).padEnd(5)} ${m.role.padEnd(9)} ${body}`
}

/** One grant: id, tool, channel, what it covers, how long, who said yes. */
function grantLine(g: GrantSummary): string {
  const covers =
    g.scope === 'pattern'
      ? `calls with ${JSON.stringify(g.pattern)}`
      : `exactly ${JSON.stringify(g.args ?? '(the args approved)')}`
  const lasts =
    g.expiry === 'until'
      ? `until ${new Date(g.until ?? 0).toISOString()}`
      : `in conversation ${String(g.conversation)}`
  return `${g.id}  ${g.tool}  ${g.channel}  ${covers}  ${lasts}  by ${g.by}`
}

function usage(io: Io): number {
  io.err.write(
    'nocturn phone: show <id> | say <id|new> "<text>" | revoke <grant-id> need their arguments\n',
  )
  return 2
}
