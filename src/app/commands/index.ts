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
  run: {
    summary: 'the appliance: listen, talk, act, ask phones (--config /etc/nocturn/config.json)',
    load: () => import('./run.js'),
  },
  config: {
    summary: 'print a commented example configuration, or check one (exit 2 when unusable)',
    load: () => import('./config.js'),
  },
  demo: {
    summary: 'the offline run of the whole appliance: no hardware, no key, no network',
    load: () => import('./demo.js'),
  },
  transcripts: {
    summary: 'list, show or delete stored conversations',
    load: () => import('./transcripts.js'),
  },
  doctor: {
    summary:
      'check config, audio, panel, broker, phones, the Gemini key and models, each with a fix',
    load: () => import('./doctor.js'),
  },
  'fake-live': {
    summary: 'run the local fake Gemini Live service (for doctor and offline runs)',
    load: () => import('./fake-live.js'),
  },
  broker: {
    summary: 'the embedded MQTT broker on loopback, for development',
    load: () => import('./broker.js'),
  },
  pair: {
    summary: 'pair a phone (a key shown once as a URI and QR code), list or revoke phones',
    load: () => import('./pair.js'),
  },
  phone: {
    summary: 'the reference phone client: watch, approve <id>, deny <id>',
    load: () => import('./phone.js'),
  },
  devices: {
    summary: 'list the capture and playback devices of an audio backend (--backend alsa|portaudio)',
    load: () => import('./devices.js'),
  },
}
