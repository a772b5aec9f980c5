/**
 * Which conversations are being spoken right now. The voice driver's composition marks a
 * conversation live for the length of a session; typed messages check it before they start.
 */
export class LiveConversations {
  readonly #live = new Set<string>()

  begin(conversationId: string): void {
    this.#live.add(conversationId)
  }

  end(conversationId: string): void {
    this.#live.delete(conversationId)
  }

  isLive(conversationId: string): boolean {
    return this.#live.has(conversationId)
  }
}
