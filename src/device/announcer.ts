import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Persona } from '../core/persona.js'
import type { AudioOut } from '../ports/audio.js'
import type { Clock, TimerHandle } from '../ports/clock.js'
import type { Speech } from '../ports/speech.js'
import type { DeviceState } from './device-state.js'

/** An announcement longer than this is refused (a few sentences; about 20 s of speech). */
export const MAX_ANNOUNCEMENT_CHARS = 300
/** At most this many wait their turn; more are refused. */
const MAX_QUEUED_ANNOUNCEMENTS = 5
/** One that waited this long is dropped: "the washing is done" an hour late is noise. */
const ANNOUNCEMENT_EXPIRY_MS = 10 * 60_000

export interface AnnouncerOptions {
  readonly speech: Speech
  readonly persona: Persona
  /** The speaker's alert path (the gain stage's, with its floor). */
  readonly sink: Pick<AudioOut, 'sampleRateHz' | 'write'>
  /** What the speaker still has to play: the next one waits until it has played out. */
  readonly speaker: Pick<AudioOut, 'queuedMs' | 'endOfReply'>
  /** The earcon before the sentence, at the sink's rate. */
  readonly chime: () => Uint8Array
  readonly device: DeviceState
  readonly clock: Clock
  readonly logger: Logger
}

interface Queued {
  readonly text: string
  readonly at: number
}

/**
 * Announcements (docs/home-assistant.md): a sentence from the broker, chimed and then said in the
 * provider's speech, never into a live conversation — while the voice driver is anything but idle
 * (or a timer rings) it waits, and is said once the device is idle again. The device's stop ends
 * the one playing and clears the queue. The text is never logged: it may be personal.
 */
export class Announcer {
  readonly #o: AnnouncerOptions
  readonly #log: Logger
  readonly #queue: Queued[] = []
  readonly #unsubscribe: Array<() => void> = []
  #busy: AbortController | undefined
  #playing: TimerHandle | undefined
  #closed = false

  constructor(options: AnnouncerOptions) {
    this.#o = options
    this.#log = options.logger.child({ component: 'announcer' })
    this.#unsubscribe.push(
      options.device.subscribe((_s, change) => {
        if (change.kind === 'activity' || change.kind === 'timers') this.#pump()
      }),
      options.device.onStop(() => this.#stop()),
    )
  }

  /** Queues a checked sentence; returns false (and logs why) when it is refused. */
  announce(text: string): boolean {
    if (this.#closed) return false
    const chars = [...text].length
    if (chars === 0 || chars > MAX_ANNOUNCEMENT_CHARS) {
      this.#log.warn(
        { event: 'announcement_refused', chars },
        `announcement refused: ${chars} characters (1 to ${MAX_ANNOUNCEMENT_CHARS})`,
      )
      return false
    }
    if (this.#queue.length >= MAX_QUEUED_ANNOUNCEMENTS) {
      this.#log.warn(
        { event: 'announcement_refused', queued: this.#queue.length },
        `announcement refused: ${MAX_QUEUED_ANNOUNCEMENTS} are already waiting`,
      )
      return false
    }
    this.#queue.push({ text, at: this.#o.clock.now() })
    this.#log.info({ chars, queued: this.#queue.length }, 'announcement queued')
    this.#pump()
    return true
  }

  close(): void {
    this.#closed = true
    this.#stop()
    for (const u of this.#unsubscribe) u()
  }

  /** Whether the room is free: no spoken session, nothing ringing. */
  #free(): boolean {
    const s = this.#o.device.snapshot
    return (s.activity === 'idle' || s.activity === 'muted') && s.ringing.length === 0
  }

  #pump(): void {
    if (this.#closed || this.#busy || this.#playing || !this.#free()) return
    const now = this.#o.clock.now()
    let next = this.#queue.shift()
    while (next && now - next.at > ANNOUNCEMENT_EXPIRY_MS) {
      this.#log.warn(
        { event: 'announcement_expired', waitedMs: now - next.at },
        'announcement dropped: it waited too long for the conversation to end',
      )
      next = this.#queue.shift()
    }
    if (next) void this.#say(next)
  }

  async #say(item: Queued): Promise<void> {
    const busy = new AbortController()
    this.#busy = busy
    const started = this.#o.clock.now()
    try {
      const audio = await this.#o.speech.synthesize(
        { text: item.text, persona: this.#o.persona },
        busy.signal,
      )
      if (busy.signal.aborted) return
      if (audio.sampleRateHz !== this.#o.sink.sampleRateHz) {
        this.#log.warn(
          { event: 'announcement_failed', rate: audio.sampleRateHz },
          `announcement not said: speech came at ${audio.sampleRateHz} Hz, the speaker plays ${this.#o.sink.sampleRateHz} Hz`,
        )
        return
      }
      if (!this.#free()) {
        // A conversation began while the speech was being made: it waits its turn again.
        this.#queue.unshift(item)
        return
      }
      this.#o.sink.write(this.#o.chime())
      this.#o.sink.write(audio.pcm)
      this.#o.speaker.endOfReply()
      this.#log.info(
        { event: 'announcement_said', synthMs: this.#o.clock.now() - started },
        'announcement said',
      )
      this.#playing = this.#o.clock.setTimeout(() => {
        this.#playing = undefined
        this.#pump()
      }, this.#o.speaker.queuedMs())
    } catch (err) {
      if (busy.signal.aborted) return
      this.#log.warn({ event: 'announcement_failed', err: errorText(err) }, 'announcement not said')
    } finally {
      if (this.#busy === busy) this.#busy = undefined
      if (!this.#playing) this.#pump()
    }
  }

  #stop(): void {
    const dropped = this.#queue.length + (this.#busy || this.#playing ? 1 : 0)
    this.#busy?.abort()
    this.#busy = undefined
    if (this.#playing) this.#o.clock.clearTimeout(this.#playing)
    this.#playing = undefined
    this.#queue.length = 0
    if (dropped > 0) this.#log.info({ dropped }, 'announcements stopped')
  }
}
