/**
 * The service's transcription of the person's items. It is asynchronous on the real service: it
 * may arrive after the reply to those words has begun, so a test can hold it (`late`) and let it
 * come when it chooses (`arrive`).
 */
export class FakeTranscriber {
  #late: { itemId: string; text: string }[] = []
  readonly #send: (event: Record<string, unknown>) => void

  constructor(send: (event: Record<string, unknown>) => void) {
    this.#send = send
  }

  /** The words of a committed user item: transcribed now, or kept for `arrive()`. */
  said(itemId: string, text: string, late: boolean): void {
    if (late) this.#late.push({ itemId, text })
    else this.#completed(itemId, text)
  }

  /** The late transcriptions arrive now, in the order their words were said. */
  arrive(): void {
    const late = this.#late
    this.#late = []
    for (const t of late) this.#completed(t.itemId, t.text)
  }

  #completed(itemId: string, text: string): void {
    this.#send({
      type: 'conversation.item.input_audio_transcription.completed',
      item_id: itemId,
      content_index: 0,
      transcript: text,
      usage: { type: 'duration', seconds: 1 },
    })
  }
}
