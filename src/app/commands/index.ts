/** A `nocturn` subcommand: `run(args)` resolves to the exit code. */
interface Command {
  run(args: string[]): Promise<number>
}

/**
 * `nocturn <name> [<verb>] --help` prints the command's own usage text (`help`, from its module,
 * the one the command itself prints on a mistake), or for a command without one `usage`, its
 * arguments in one line.
 */
export type CommandEntry = {
  readonly summary: string
  load(): Promise<Command>
} & (
  | { readonly usage: string; readonly help?: never }
  | { readonly help: (args: readonly string[]) => Promise<string>; readonly usage?: never }
)

/** Every subcommand, one line each; the module is imported only when the command is chosen. */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  run: {
    summary: 'the appliance: listen, talk, act, ask phones (--config /etc/nocturn/config.json)',
    usage:
      '[--config /etc/nocturn/config.json]   (NOCTURN_CONFIG also names the file; secrets from the environment or systemd credentials)',
    load: () => import('./run.js'),
  },
  config: {
    summary: 'print a commented example configuration, or check one (exit 2 when unusable)',
    help: () => import('./config.js').then((m) => m.HELP),
    load: () => import('./config.js'),
  },
  demo: {
    summary: 'the offline run of the whole appliance: no hardware, no key, no network',
    usage:
      '[--listen wake|speech] [--phone]   (what npm start runs; keeps var/offline/ for nocturn transcripts)',
    load: () => import('./demo.js'),
  },
  transcripts: {
    summary: "list, show or delete the stored conversations (the configuration's store.path)",
    help: () => import('./transcripts.js').then((m) => m.USAGE),
    load: () => import('./transcripts.js'),
  },
  doctor: {
    summary:
      'check config, audio, panel, broker, phones, the Gemini key and models, each with a fix',
    help: () => import('./doctor.js').then((m) => m.USAGE),
    load: () => import('./doctor.js'),
  },
  'fake-live': {
    summary: 'run the local fake Gemini Live service (for doctor and offline runs)',
    usage: '[--port 8790]',
    load: () => import('./fake-live.js'),
  },
  broker: {
    summary: 'the embedded MQTT broker on loopback, for development',
    usage: '[--port 1883] [--prefix nocturn/v1]',
    load: () => import('./broker.js'),
  },
  pair: {
    summary: 'pair a phone (a key shown once as a URI and QR code), list or revoke phones',
    help: () => import('./pair.js').then((m) => m.USAGE),
    load: () => import('./pair.js'),
  },
  tls: {
    summary:
      "make the household CA (once) and renew the device's HTTPS certificate for the phone app",
    help: () => import('./tls.js').then((m) => m.USAGE),
    load: () => import('./tls.js'),
  },
  phone: {
    summary: 'the reference phone client: watch, approve <id>, deny <id>',
    help: () => import('./phone.js').then((m) => m.USAGE),
    load: () => import('./phone.js'),
  },
  wake: {
    summary:
      "list the pretrained wake phrases, install one (with its licence), or enrol the household's verifier",
    help: (args) =>
      args[0] === 'enroll'
        ? import('./wake-enroll.js').then((m) => m.USAGE)
        : import('./wake.js').then((m) => m.USAGE),
    load: () => import('./wake.js'),
  },
  devices: {
    summary: 'list the capture and playback devices of an audio backend (--backend alsa|portaudio)',
    usage: '[--backend alsa|portaudio]',
    load: () => import('./devices.js'),
  },
}
