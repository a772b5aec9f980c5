/** A `nocturn` subcommand: `run(args)` resolves to the exit code. */
export interface Command {
  run(args: string[]): Promise<number>
}

export interface CommandEntry {
  readonly summary: string
  load(): Promise<Command>
}

/** Every subcommand, one line each; the module is imported only when the command is chosen. */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  demo: {
    summary: 'the offline run: a short conversation against the scripted model',
    load: () => import('./demo.js'),
  },
  devices: {
    summary: 'list the capture and playback devices of an audio backend (--backend alsa|portaudio)',
    load: () => import('./devices.js'),
  },
}
