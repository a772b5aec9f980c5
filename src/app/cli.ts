import { errorText } from '../core/errors.js'
import { COMMANDS } from './commands/index.js'

/**
 * `nocturn <command> [args]`: each command lives in its own module under `commands/`, loaded only
 * when chosen, so `nocturn pair` never loads the audio stack.
 */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(usage())
    return name ? 0 : 2
  }
  const entry = COMMANDS[name]
  if (!entry) {
    process.stderr.write(`nocturn: unknown command "${name}"\n\n${usage()}`)
    return 2
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(
      entry.help
        ? await entry.help(rest)
        : `usage: nocturn ${name} ${entry.usage}\n\n${entry.summary}\n`,
    )
    return 0
  }
  const mod = await entry.load()
  return mod.run(rest)
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length))
  const lines = Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(width)}  ${c.summary}`)
  return `usage: nocturn <command> [options]\n\ncommands:\n${lines.join('\n')}\n`
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (err: unknown) => {
    process.stderr.write(`nocturn: ${errorText(err)}\n`)
    process.exitCode = 1
  },
)
