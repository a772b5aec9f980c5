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

/** A command whose module exports its own usage text as `USAGE`: `--help` prints that. */
function withUsage(
  summary: string,
  load: () => Promise<Command & { readonly USAGE: string }>,
): CommandEntry {
  return { summary, help: () => load().then((m) => m.USAGE), load }
}

/** A command without usage text of its own: `--help` prints its arguments, `usage`, in one line. */
function withArgs(summary: string, usage: string, load: () => Promise<Command>): CommandEntry {
  return { summary, usage, load }
}

/** Every subcommand, one line each; the module is imported only when the command is chosen. */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  run: withArgs(
    'the appliance: listen, talk, act, ask phones (--config /etc/nocturn/config.json)',
    '[--config /etc/nocturn/config.json]   (NOCTURN_CONFIG also names the file; secrets from the environment or systemd credentials)',
    () => import('./run.js'),
  ),
  config: withUsage(
    'print a commented example configuration, or check one (exit 2 when unusable)',
    () => import('./config.js'),
  ),
  demo: withArgs(
    'the offline run of the whole appliance: no hardware, no key, no network',
    '[--listen wake|speech] [--phone]   (what npm start runs; keeps var/offline/ for nocturn transcripts)',
    () => import('./demo.js'),
  ),
  transcripts: withUsage(
    "list, show or delete the stored conversations (the configuration's store.path)",
    () => import('./transcripts.js'),
  ),
  doctor: withUsage(
    'check config, audio, panel, broker, phones, the provider key and models, each with a fix',
    () => import('./doctor.js'),
  ),
  'fake-live': withArgs(
    'run the local fake Gemini Live service (for doctor and offline runs)',
    '[--port 8790]',
    () => import('./fake-live.js'),
  ),
  broker: withArgs(
    'the embedded MQTT broker on loopback, for development',
    '[--port 1883] [--prefix nocturn/v1]',
    () => import('./broker.js'),
  ),
  pair: withUsage(
    'pair a phone (a key shown once as a URI and QR code), list or revoke phones',
    () => import('./pair.js'),
  ),
  tls: withUsage(
    "make the household CA (once) and renew the device's HTTPS certificate for the phone app",
    () => import('./tls.js'),
  ),
  phone: withUsage(
    'the reference phone client: watch, approve <id>, deny <id>',
    () => import('./phone.js'),
  ),
  wake: {
    summary:
      "list the pretrained wake phrases, install one (with its licence), or enrol the household's verifier",
    help: (args) =>
      args[0] === 'enroll'
        ? import('./wake-enroll.js').then((m) => m.USAGE)
        : import('./wake.js').then((m) => m.USAGE),
    load: () => import('./wake.js'),
  },
  devices: withArgs(
    'list the capture and playback devices of an audio backend (--backend alsa|portaudio)',
    '[--backend alsa|portaudio]',
    () => import('./devices.js'),
  ),
}
