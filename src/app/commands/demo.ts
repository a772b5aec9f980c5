import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { errorText } from '../../core/errors.js'
import { createLogger } from '../logger.js'
import { runOffline } from '../offline-run.js'
import { runPhoneDemo } from '../phone-demo.js'

/**
 * `nocturn demo`: what `npm start` runs — the offline run of the whole appliance, in wake mode
 * (the hey_jarvis model from the model package, a devDependency). `--listen speech` plays it
 * without the wake word, as before it: for a machine that cannot score it in real time (an
 * emulated board: scripts/arm64-emulated-install.sh), where the wake would be missed. With `--phone`
 * (`npm start -- --phone`): the same appliance serving the phone app, waiting for a browser's yes.
 */
export async function run(args: string[]): Promise<number> {
  let values: { phone?: boolean; listen: string; provider: string }
  try {
    ;({ values } = parseArgs({
      args,
      options: {
        phone: { type: 'boolean' },
        listen: { type: 'string', default: 'wake' },
        provider: { type: 'string', default: 'gemini' },
      },
    }))
  } catch (err) {
    process.stderr.write(
      `nocturn demo: ${errorText(err)} (it takes --listen wake|speech and --phone; --provider gemini|openai)\n`,
    )
    return 2
  }
  const provider = values.provider
  if (provider !== 'gemini' && provider !== 'openai') {
    process.stderr.write('nocturn demo: --provider takes "gemini" (the default) or "openai"\n')
    return 2
  }
  const listen = values.listen
  if (listen !== 'wake' && listen !== 'speech') {
    process.stderr.write('nocturn demo: --listen takes "wake" (the default) or "speech"\n')
    return 2
  }
  // The timeline goes to stdout; log lines to stderr at warn unless asked for more.
  const logger = createLogger({
    level: process.env.NOCTURN_LOG_LEVEL ?? 'warn',
    destination: process.stderr,
  })
  // src/app/commands or dist/app/commands: the project root is three levels up.
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
  // The closing hint names a command that works here: tsx is a development tool, absent from an
  // installed device, so a built run points at the built CLI.
  const self = fileURLToPath(import.meta.url)
  const built = resolve(dirname(self), '../cli.js')
  const near = relative(process.cwd(), built)
  const cli = self.endsWith('.ts')
    ? 'npm run nocturn --'
    : `node ${near && !near.startsWith('..') ? near : built}`
  if (values.phone) {
    const stop = new AbortController()
    const onSignal = () => stop.abort()
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
    try {
      return await runPhoneDemo({
        out: process.stdout,
        logger,
        workDir: demoDir(root, 'phone-demo'),
        signal: stop.signal,
      })
    } finally {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    }
  }
  return runOffline({
    out: process.stdout,
    logger,
    root,
    workDir: demoDir(root, 'offline'),
    cli,
    listen,
    provider,
  })
}

/**
 * Where a demo keeps its store and recordings: `var/<name>` in a checkout (it has `src/`); in an
 * installed copy, which ships no sources and is root's (/opt/nocturn), a new private folder under
 * the temporary directory (mkdtemp: 0700, a name nobody could have prepared), so `nocturn demo`
 * runs as any user and never writes into the program.
 */
function demoDir(root: string, name: string): string {
  if (existsSync(join(root, 'src'))) return resolve(root, 'var', name)
  return mkdtempSync(join(tmpdir(), `nocturn-${name}-`))
}
