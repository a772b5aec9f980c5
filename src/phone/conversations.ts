import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { GrantSummary, PhoneOp } from '../protocol/grant-ops.js'
import { newNonce, type Topics, topicsFor } from '../protocol/index.js'
import { phoneRequestMessage, type VerifiedReply, verifyReply } from '../protocol/phone-side.js'
import { openPhoneSide, type PhoneLinkOptions, type PhoneSide } from './phone-link-options.js'

export interface PhoneConversationsOptions extends PhoneLinkOptions {
  /** How long a request waits for its final answer. */
  readonly timeoutMs?: number
  /** How long `say` waits: a typed turn may wait for a human's approval (two minutes by default). */
  readonly sayTimeoutMs?: number
}

/** A refusal from the device, with its error code (docs/errors.md). */
export class DeviceRefusal extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.name = 'DeviceRefusal'
    this.code = code
  }
}

export interface FollowEvent {
  readonly kind: 'message' | 'approval'
  readonly body: Record<string, unknown>
}

interface Waiter {
  readonly replies: VerifiedReply[]
  onReply(r: VerifiedReply): void
}

/**
 * The phone's side of conversations over MQTT: signed requests, and only answers that verify with
 * this phone's key, name this device and this phone, and answer a request this phone sent are
 * believed. Anything else on the reply topic is counted in `refused` and ignored.
 */
export class PhoneConversations {
  readonly topics: Topics
  readonly #options: PhoneConversationsOptions
  readonly #side: PhoneSide
  readonly #log: Logger
  readonly #waiting = new Map<string, Waiter>()
  refused = 0

  constructor(options: PhoneConversationsOptions) {
    this.#options = options
    this.topics = topicsFor(options.pairing.prefix, options.pairing.device)
    this.#log = options.logger.child({
      component: 'phone-conversations',
      phone: options.pairing.phone,
    })
    this.#side = openPhoneSide(options, {
      role: 'c',
      filters: [this.topics.conversationReply(options.pairing.phone)],
      onMessage: (topic, payload) => this.#onMessage(topic, payload),
      logger: this.#log,
    })
  }

  async start(): Promise<void> {
    this.#side.link.start()
    await this.#side.link.ready
  }

  async close(): Promise<void> {
    await this.#side.link.close()
  }

  /** Newest first; `next` (passed back as it came) asks for the page after this one. */
  async list(
    page: { limit?: number; before?: number | undefined; beforeId?: string | undefined } = {},
  ) {
    const { items, done } = await this.request('list', page)
    return {
      conversations: items as ConversationSummaryWire[],
      // `beforeId` is absent from devices older than it: `before` alone then, as they expect.
      next: (done.next as { before: number; beforeId?: string } | undefined) ?? null,
    }
  }

  /** One page of messages in stored order; `next.afterSeq` continues it. */
  async show(conversation: string, page: { afterSeq?: number; limit?: number } = {}) {
    const { items, done } = await this.request('show', { conversation, ...page })
    return {
      conversation: String(done.conversation),
      info: done.info as ConversationInfoWire,
      messages: items as WireMessage[],
      next: (done.next as { afterSeq: number } | undefined) ?? null,
    }
  }

  /** Every message of a conversation, page by page. */
  async showAll(conversation: string, limit = 500): Promise<WireMessage[]> {
    const all: WireMessage[] = []
    let afterSeq = 0
    for (;;) {
      const page = await this.show(conversation, { afterSeq, limit })
      all.push(...page.messages)
      if (page.messages.length < limit || !page.next) return all
      afterSeq = page.next.afterSeq
    }
  }

  /** Types a message into a conversation (or `new`); parts stream to `onPart` as they arrive. */
  async say(
    conversation: string,
    text: string,
    hooks: {
      onPart?: (text: string) => void
      onPending?: (p: Record<string, unknown>) => void
    } = {},
  ): Promise<{ conversation: string; info: ConversationInfoWire; text: string }> {
    const { items, done } = await this.request('say', { conversation, text }, (r) => {
      const body = r.body as Record<string, unknown>
      if (r.kind === 'part' && typeof body.text === 'string') hooks.onPart?.(body.text)
      if (r.kind === 'pending') hooks.onPending?.(body)
    })
    // A long answer arrives as pieces in `items`, and `done` then has no text.
    const answer = typeof done.text === 'string' ? done.text : items.map(String).join('')
    return {
      conversation: String(done.conversation),
      info: done.info as ConversationInfoWire,
      text: answer,
    }
  }

  async delete(conversation: string): Promise<void> {
    await this.request('delete', { conversation })
  }

  /** The grants in force on the device, oldest first (docs/protocol.md "Grants"). */
  async grants(): Promise<GrantSummary[]> {
    const { items } = await this.request('grants', {})
    return items as GrantSummary[]
  }

  /** Takes a grant back: the next call it covered asks again. */
  async revoke(grant: string): Promise<void> {
    await this.request('revoke', { grant })
  }

  /**
   * Follows a conversation (or `*`, all of them) live: every message the device stores and every
   * approval it asks for arrive at `onEvent` until `stop()`. The device ends a follow after
   * `forMs`; this renews it at half that, so a follow lasts as long as the phone wants it.
   */
  async follow(
    conversation: string,
    onEvent: (e: FollowEvent) => void,
    forMs = 10 * 60_000,
  ): Promise<{ stop(): Promise<void> }> {
    let current = await this.#follow(conversation, onEvent, forMs)
    let stopped = false
    const renew = setInterval(
      () => {
        this.#follow(conversation, onEvent, forMs).then(
          (id) => {
            // Events for the old follow all came before the new one's answer (one topic, in order).
            this.#waiting.delete(current)
            current = id
            if (stopped) this.#waiting.delete(id)
          },
          (err: unknown) =>
            this.#log.warn(
              { event: 'follow_not_renewed', err: errorText(err) },
              'follow not renewed',
            ),
        )
      },
      Math.max(1000, Math.floor(forMs / 2)),
    )
    renew.unref()
    return {
      stop: async () => {
        stopped = true
        clearInterval(renew)
        this.#waiting.delete(current)
        await this.request('unfollow', {}).catch(() => {})
      },
    }
  }

  async #follow(
    conversation: string,
    onEvent: (e: FollowEvent) => void,
    forMs: number,
  ): Promise<string> {
    const id = newNonce().slice(0, 22)
    // The follow keeps its waiter after the final answer: events arrive on the follow's id.
    const replies = await this.#send(id, 'follow', { conversation, forMs }, (r) => {
      if (r.kind === 'message' || r.kind === 'approval') {
        onEvent({ kind: r.kind, body: r.body as Record<string, unknown> })
      }
    })
    const last = replies.at(-1)
    if (last?.kind === 'error') {
      this.#waiting.delete(id)
      const body = last.body as Record<string, unknown>
      throw new DeviceRefusal(String(body.code), String(body.message))
    }
    return id
  }

  /**
   * Sends one signed request and collects its answers until the final one. `items` are the
   * slices of a list or show answer, in order.
   */
  async request(
    op: PhoneOp,
    args: Record<string, unknown>,
    onReply?: (r: VerifiedReply) => void,
  ): Promise<{ items: unknown[]; done: Record<string, unknown>; replies: VerifiedReply[] }> {
    const id = newNonce().slice(0, 22)
    const replies = await this.#send(id, op, args, onReply)
    this.#waiting.delete(id)
    const last = replies.at(-1)
    const body = (last?.body ?? {}) as Record<string, unknown>
    if (last?.kind === 'error') {
      throw new DeviceRefusal(String(body.code), String(body.message))
    }
    const items = replies
      .filter((r) => r.kind === 'items')
      .flatMap((r) => ((r.body as { items?: unknown[] }).items ?? []) as unknown[])
    return { items, done: body, replies }
  }

  /** Resolves with the answers (in order, no gaps) once the final one is here. */
  #send(
    id: string,
    op: PhoneOp,
    args: Record<string, unknown>,
    onReply?: (r: VerifiedReply) => void,
  ): Promise<VerifiedReply[]> {
    const phone = this.#side.me.phone
    const msg = phoneRequestMessage(this.#side.me, id, op, args, this.#side.now())
    return new Promise<VerifiedReply[]>((resolve, reject) => {
      const byN = new Map<number, VerifiedReply>()
      let next = 0
      let finalAt: number | undefined
      const timer = setTimeout(
        () => {
          this.#waiting.delete(id)
          reject(new Error(`no answer from the speaker to ${op}`))
        },
        op === 'say'
          ? (this.#options.sayTimeoutMs ?? 150_000)
          : (this.#options.timeoutMs ?? 30_000),
      )
      const ordered: VerifiedReply[] = []
      const waiter: Waiter = {
        replies: ordered,
        onReply: (r) => {
          byN.set(r.n, r)
          // Deliver in order: QoS 1 keeps order on one topic, but a phone must not rely on it.
          while (byN.has(next)) {
            const x = byN.get(next) as VerifiedReply
            byN.delete(next)
            next++
            ordered.push(x)
            onReply?.(x)
            if (x.kind === 'done' || x.kind === 'error') finalAt = ordered.length
          }
          if (finalAt !== undefined && ordered.length >= finalAt) {
            clearTimeout(timer)
            // A follow keeps listening for events after its final answer.
            if (op !== 'follow') this.#waiting.delete(id)
            resolve(ordered.slice())
          }
        },
      }
      this.#waiting.set(id, waiter)
      this.#side.link
        .publish(this.topics.conversationRequest(phone), JSON.stringify(msg), {
          qos: 1,
          retain: false,
        })
        .catch((err: unknown) => {
          clearTimeout(timer)
          this.#waiting.delete(id)
          reject(err instanceof Error ? err : new Error(errorText(err)))
        })
    })
  }

  #onMessage(topic: string, payload: Buffer): void {
    if (topic !== this.topics.conversationReply(this.#side.me.phone)) return
    const r = verifyReply(this.#side.me, payload)
    const reason = !r.ok ? r.reason : this.#waiting.has(r.value.re) ? undefined : 'unasked'
    if (reason !== undefined || !r.ok) {
      this.refused++
      this.#log.warn({ event: 'reply_refused', reason, bytes: payload.length }, 'reply refused')
      return
    }
    this.#waiting.get(r.value.re)?.onReply(r.value)
  }
}

/** Sent beside a conversation's id in `show` and `say` answers. */
export interface ConversationInfoWire {
  readonly channel: 'voice' | 'text'
  readonly title: string | null
  readonly createdAt: number
  readonly updatedAt: number
}

interface ConversationSummaryWire {
  readonly id: string
  readonly channel: 'voice' | 'text'
  readonly createdAt: number
  readonly updatedAt: number
  readonly summary: string
  readonly last: { role: string; text: string; at: number } | null
  /** The phones that typed in it, in the order each first typed; absent from older devices. */
  readonly typedBy?: readonly string[]
}

/** A stored message as the device sends it (see docs/protocol.md). */
export type WireMessage = Record<string, unknown> & {
  readonly seq: number
  readonly role: 'user' | 'assistant' | 'tool'
}
