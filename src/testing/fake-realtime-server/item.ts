/** An item of the conversation, as the fake keeps it: what was said, heard, called or answered. */
export interface Item {
  readonly id: string
  readonly type: string
  readonly role?: string
  readonly callId?: string
  audioMs: number
  transcript: string
  output?: string
}

let ids = 0
/** An id as the service makes them (`item_…`, `resp_…`, `event_…`), unique across the fake. */
export const nextId = (prefix: string) => `${prefix}_${(++ids).toString(36).padStart(6, '0')}`
