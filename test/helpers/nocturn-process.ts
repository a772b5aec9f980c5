import { type ChildProcess, spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Pairing } from '../../src/protocol/index.js'
import { USERS } from './brokers.js'
import { testPairing } from './device-mqtt.js'

const ROOT = join(import.meta.dirname, '../..')

/** The sources through tsx: what `npm run nocturn` runs. */
const FROM_SOURCES: readonly string[] = ['--import', 'tsx', 'src/app/cli.ts']

/** One structured (pino) log line of the process. */
export interface LogLine {
  event?: string
  msg?: string
  [field: string]: unknown
}

export interface NocturnProcessOptions {
  /** The command and its arguments, e.g. `['run', '--config', path]`. */
  args: readonly string[]
  /** Added to this process's environment. Secrets go here, never in `args`. */
  env?: NodeJS.ProcessEnv
  /** Node options before the entry (a loader hook, say). */
  nodeArgs?: readonly string[]
  /** The CLI to run: the sources (default) or a built bundle, e.g. `['dist/service/cli.js']`. */
  entry?: readonly string[]
}

/**
 * `nocturn` as its own process, as a household starts it: its structured log lines collected as
 * they come, waits that fail with what the process said last, and a stop that cannot hang a test.
 */
export class NocturnProcess {
  readonly child: ChildProcess
  /** Every parsed log line so far, stdout and stderr, in arrival order. */
  readonly lines: LogLine[] = []
  #output = ''
  readonly #exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>

  private constructor(options: NocturnProcessOptions) {
    this.child = spawn(
      process.execPath,
      [...(options.nodeArgs ?? []), ...(options.entry ?? FROM_SOURCES), ...options.args],
      // Its own process group, so a stop can end what it started too (below).
      {
        cwd: ROOT,
        env: { ...process.env, ...options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    )
    this.#exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => resolve({ code, signal })),
    )
    // Each stream keeps its own partial line: a chunk may end mid-line.
    for (const stream of [this.child.stdout, this.child.stderr]) {
      let partial = ''
      stream?.on('data', (chunk: Buffer) => {
        const text = chunk.toString()
        this.#output += text
        const parts = (partial + text).split('\n')
        partial = parts.pop() ?? ''
        for (const line of parts) this.#parse(line)
      })
    }
  }

  static start(options: NocturnProcessOptions): NocturnProcess {
    return new NocturnProcess(options)
  }

  /** All the process wrote so far, stdout and stderr as they arrived. */
  get output(): string {
    return this.#output
  }

  /** The last `count` lines it wrote, for a failure message. */
  tail(count = 40): string {
    return this.#output.split('\n').slice(-count).join('\n')
  }

  /** Resolves once `ok()` holds; fails if the process exits first or `timeoutMs` passes. */
  async waitFor(what: string, ok: () => boolean, timeoutMs = 45_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!ok()) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`nocturn exited early, before ${what}; it said last:\n${this.tail()}`)
      }
      if (Date.now() > deadline) {
        throw new Error(
          `no ${what} within ${timeoutMs / 1000} s; nocturn said last:\n${this.tail()}`,
        )
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  /** The first log line that `match` accepts, once there is one. */
  async waitForLine(
    what: string,
    match: (line: LogLine) => boolean,
    timeoutMs?: number,
  ): Promise<LogLine> {
    await this.waitFor(what, () => this.lines.some(match), timeoutMs)
    return this.lines.find(match) as LogLine
  }

  /** The first log line with `"event": event`, once there is one. */
  waitForEvent(event: string, timeoutMs?: number): Promise<LogLine> {
    return this.waitForLine(`"event":"${event}"`, (l) => l.event === event, timeoutMs)
  }

  /** Whether a log line has `"event": event` already. */
  saw(event: string): boolean {
    return this.lines.some((l) => l.event === event)
  }

  /**
   * Sends `signal` (by pid) and resolves with how the process ended; one still running after
   * `graceMs` is killed (SIGKILL), so a shutdown that hangs shows as a signal, not a stuck test.
   */
  async stop(
    signal: NodeJS.Signals = 'SIGTERM',
    graceMs = 15_000,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill(signal)
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs)
      await this.#exited.finally(() => clearTimeout(timer))
    }
    const ended = await this.#exited
    // A process killed outright cannot end its children (gpiomon, arecord, aplay): on a device
    // systemd's cgroup ends them; here its process group does, or they outlive the test run.
    if (ended.signal === 'SIGKILL') this.#endGroup()
    return ended
  }

  #endGroup(): void {
    const pid = this.child.pid
    if (pid === undefined) return
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      // ESRCH: nothing of the group is left.
    }
  }

  #parse(line: string): void {
    if (!line.startsWith('{')) return
    try {
      this.lines.push(JSON.parse(line) as LogLine)
    } catch {
      // Not a log line (a stray write that starts with a brace): only `output` keeps it.
    }
  }
}

/**
 * `nocturn run --config <config>` logging at info, as the device's broker user (its password in the
 * environment) with the given Gemini key.
 */
export function startNocturnRun(
  config: string,
  options: { apiKey: string; env?: NodeJS.ProcessEnv } & Omit<
    NocturnProcessOptions,
    'args' | 'env'
  >,
): NocturnProcess {
  return NocturnProcess.start({
    ...options,
    args: ['run', '--config', config],
    env: {
      GEMINI_API_KEY: options.apiKey,
      NOCTURN_MQTT_PASSWORD: USERS.device.password,
      NOCTURN_LOG_LEVEL: 'info',
      ...options.env,
    },
  })
}

/** The config's `provider` section for the fake Live service at `baseUrl`. */
export function fakeLiveProvider(baseUrl: string) {
  return {
    model: 'gemini-2.5-flash-native-audio-preview-12-2025',
    textModel: 'gemini-3.5-flash',
    baseUrl,
  }
}

/**
 * Writes `<work>/config.json` for `nocturn run` against the fake Live service at `baseUrl`, with
 * WAV audio (`inputWav` in, `<work>/speaker.wav` out), the broker at `brokerUrl` as device
 * `kitchen`, and its phones and store under `work`; `extra` adds or replaces top-level sections.
 */
export function writeRunConfig(
  work: string,
  settings: { baseUrl: string; inputWav: string; brokerUrl: string },
  extra: Record<string, unknown> = {},
): string {
  const path = join(work, 'config.json')
  writeFileSync(
    path,
    JSON.stringify({
      provider: fakeLiveProvider(settings.baseUrl),
      audio: {
        backend: 'wav',
        inputWav: settings.inputWav,
        outputWav: join(work, 'speaker.wav'),
      },
      mqtt: { url: settings.brokerUrl, deviceId: 'kitchen', username: USERS.device.username },
      phonesDir: join(work, 'phones'),
      store: { path: join(work, 'nocturn.db') },
      // On by default with a broker, on port 8080: two tests at once (or anything else on the
      // machine holding it) would each see a fault the test did not make.
      phoneApp: { enabled: false },
      ...extra,
    }),
  )
  return path
}

/** How the phone `phone` (Anna's, unless named) pairs with the `kitchen` device writeRunConfig sets up. */
export function kitchenPairing(brokerUrl: string, key: Buffer, phone = 'anna'): Pairing {
  return testPairing(brokerUrl, 'kitchen', phone, key)
}
