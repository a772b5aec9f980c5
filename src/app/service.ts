import { errorText } from '../core/errors.js'
import { run } from './commands/run.js'

/**
 * `nocturn run` as the systemd unit starts it: `node dist/service/cli.js run --config <path>`.
 * `npm run build` bundles this entry (scripts/bundle-service.mjs) with everything `run` loads at
 * start into one file, because Node 20 loads ES modules one by one — about 220 files (ours and
 * zod's) cost more start-up than the code in them — and has no compile cache. What `run` loads
 * later (an audio backend, the Gemini SDK, and everything composed after the panel:
 * compose/after-panel.ts) stays in chunks loaded when needed. Every other
 * command: `dist/app/cli.js`.
 */
const [command, ...rest] = process.argv.slice(2)
if (command === 'run') {
  run(rest).then(
    (code) => {
      process.exitCode = code
    },
    (err: unknown) => {
      process.stderr.write(`nocturn: ${errorText(err)}\n`)
      process.exitCode = 1
    },
  )
} else {
  const help = command === '--help' || command === '-h'
  ;(help ? process.stdout : process.stderr).write(
    'usage: node dist/service/cli.js run [--config /etc/nocturn/config.json]\n\n' +
      'The appliance, bundled for the systemd unit; every other command: node dist/app/cli.js\n',
  )
  process.exitCode = help ? 0 : 2
}
