/** How soon an owed response should start: `now` after the active one, `idle` also after the user. */
export type Urgency = 'now' | 'idle'

/**
 * One response at a time (the Realtime API refuses a `response.create` while one is active, with
 * `conversation_already_has_active_response`): a response the adapter owes the model — after a
 * function output — waits here until the active one is done, and is never dropped. Several owed
 * at once are one `response.create`: every item added before it is in the conversation it reads.
 * `idle` ones also wait while the user is speaking (the server's VAD answers them then anyway).
 */
export class ResponseQueue {
  #active = false
  #owed: Urgency | undefined
  /** The urgency of the `response.create` last sent, should it bounce. */
  #sent: Urgency = 'now'
  #userSpeaking = false
  readonly #create: () => boolean

  /** `create` sends one `response.create`; false when it could not be sent (stays owed). */
  constructor(create: () => boolean) {
    this.#create = create
  }

  get active(): boolean {
    return this.#active
  }

  get owed(): Urgency | undefined {
    return this.#owed
  }

  request(urgency: Urgency): void {
    if (this.#owed !== 'now') this.#owed = urgency
    this.#flush()
  }

  /** `response.created` — ours or one the server's VAD started. */
  started(): void {
    this.#active = true
  }

  /** `response.done`, whatever its status. */
  done(): void {
    this.#active = false
    this.#flush()
  }

  /** Our `response.create` bounced off a response already active: owed again, after that one. */
  bounced(): void {
    this.#active = true
    this.request(this.#sent)
  }

  /** Our `response.create` failed for another reason: nothing is active on its account, as after `done`. */
  failed(): void {
    this.done()
  }

  speechStarted(): void {
    this.#userSpeaking = true
  }

  speechStopped(): void {
    this.#userSpeaking = false
    this.#flush()
  }

  #flush(): void {
    const owed = this.#owed
    if (this.#active || owed === undefined) return
    if (owed === 'idle' && this.#userSpeaking) return
    this.#owed = undefined
    this.#sent = owed
    this.#active = true
    if (!this.#create()) {
      this.#active = false
      this.#owed = owed
    }
  }
}
