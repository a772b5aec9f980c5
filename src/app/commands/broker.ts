import { parseArgs } from 'node:util'
import { EmbeddedBroker } from '../../adapters/aedes/broker.js'
import { DEFAULT_PREFIX } from '../../protocol/index.js'
import { createLogger } from '../logger.js'

/**
 * `nocturn broker [--port 1883] [--prefix P]`: the embedded broker for development, on loopback
 * only and open to anyone there (no users). A household points Nocturn at its own broker instead.
 */
export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: 'string', default: '1883' }, prefix: { type: 'string' } },
  })
  const port = Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write('nocturn broker: --port must be a port number\n')
    return 2
  }
  const broker = new EmbeddedBroker({
    port,
    prefix: values.prefix ?? DEFAULT_PREFIX,
    logger: createLogger(),
  })
  await broker.start()
  process.stdout.write(`embedded broker on ${broker.url} (loopback only); Ctrl-C stops it\n`)
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await broker.stop()
  return 0
}
