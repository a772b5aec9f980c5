import { errorText } from '../../core/errors.js'

/**
 * A command's arguments as `parse` reads them (node:util `parseArgs` throws on an unknown or
 * malformed option), or — when they do not parse — undefined, with the reason and the command's
 * usage written to `err`; the command then exits 2.
 */
export function parsedOrUsage<T>(
  command: string,
  parse: () => T,
  o: { readonly err: { write(s: string): unknown }; readonly usage: string },
): T | undefined {
  try {
    return parse()
  } catch (err) {
    o.err.write(`nocturn ${command}: ${errorText(err)}\n\n${o.usage}`)
    return undefined
  }
}
