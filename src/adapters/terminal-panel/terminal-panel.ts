import type { Clock, TimerHandle } from '../../ports/clock.js'
import type { ButtonEvent, LedState, Panel } from '../../ports/panel.js'

export interface TerminalPanelOptions {
  readonly input: NodeJS.ReadableStream & {
    isTTY?: boolean
    setRawMode?: (raw: boolean) => unknown
  }
  readonly output: NodeJS.WritableStream & { isTTY?: boolean }
  readonly clock: Clock
  /** How long the `s` key "holds" the button: longer than the long-press threshold. */
  readonly holdMs?: number
  /** What `m` and `s` do in this listen mode, shown on the status line. */
  readonly keys?: string
}

const SYMBOL: Record<LedState, string> = {
  idle: '○ idle',
  listening: '● listening',
  speaking: '◉ speaking',
  waiting_for_approval: '◎ waiting for approval',
  muted: '⊘ muted',
  error: '✖ error',
  ringing: '♪ ringing',
}

/**
 * The panel for development on a laptop: `m` (or space) is a short press — mute — and `s` a long
 * press — stop talking (what each does in other listen modes: hardware/button.md, shown as `keys`);
 * the LED is a status line. On a terminal it redraws one line in place; piped,
 * it prints one line per change. Ctrl-C still ends the process (raw mode would swallow it).
 */
export class TerminalPanel implements Panel {
  readonly #options: TerminalPanelOptions
  #onButton: ((event: ButtonEvent) => void) | undefined
  #last: LedState | undefined
  #releaseTimer: TimerHandle | undefined
  readonly #onData = (chunk: Buffer | string) => {
    for (const ch of String(chunk)) this.#key(ch)
  }

  constructor(opts: TerminalPanelOptions) {
    this.#options = opts
  }

  async start(onButton: (event: ButtonEvent) => void): Promise<void> {
    this.#onButton = onButton
    const { input } = this.#options
    if (input.isTTY && input.setRawMode) input.setRawMode(true)
    input.on('data', this.#onData)
    input.resume?.()
  }

  setLed(state: LedState): void {
    if (state === this.#last) return
    this.#last = state
    const line = `[nocturn] ${SYMBOL[state]}   (${this.#options.keys ?? 'm: mute, s: stop talking'})`
    this.#options.output.write(this.#options.output.isTTY ? `\r\x1b[2K${line}` : `${line}\n`)
  }

  async close(): Promise<void> {
    const { input, output } = this.#options
    input.removeListener('data', this.#onData)
    if (input.isTTY && input.setRawMode) input.setRawMode(false)
    input.pause?.()
    if (this.#releaseTimer) this.#options.clock.clearTimeout(this.#releaseTimer)
    if (output.isTTY && this.#last) output.write('\n')
  }

  #key(ch: string): void {
    const now = this.#options.clock.now()
    if (ch === '\u0003') {
      // Raw mode turns Ctrl-C into a byte; give it back its meaning.
      process.kill(process.pid, 'SIGINT')
      return
    }
    if (ch === 'm' || ch === 'M' || ch === ' ') {
      this.#onButton?.({ kind: 'press', atMs: now })
      this.#onButton?.({ kind: 'release', atMs: now + 50 })
    } else if ((ch === 's' || ch === 'S') && !this.#releaseTimer) {
      this.#onButton?.({ kind: 'press', atMs: now })
      const hold = this.#options.holdMs ?? 1200
      this.#releaseTimer = this.#options.clock.setTimeout(() => {
        this.#releaseTimer = undefined
        this.#onButton?.({ kind: 'release', atMs: this.#options.clock.now() })
      }, hold)
    }
  }
}
