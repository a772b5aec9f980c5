import { parseArgs } from 'node:util'
import { FakeLiveServer } from '../../testing/fake-live-server/index.js'

/**
 * `nocturn fake-live [--port N]`: the local fake Gemini Live service on 127.0.0.1, for trying
 * `nocturn doctor --base-url http://127.0.0.1:N` (or anything else) with no network and no key.
 * Every connection is answered and then says a canned hello. Runs until interrupted.
 */
export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { port: { type: 'string', default: '8790' } } })
  const server = await FakeLiveServer.start({
    port: Number(values.port),
    scripts: () => ({
      steps: [
        { speak: 'hello', paceMs: 40 },
        { send: { serverContent: { generationComplete: true } } },
        { send: { serverContent: { turnComplete: true } } },
      ],
    }),
  })
  process.stdout.write(`fake Gemini Live on ${server.baseUrl} (Ctrl-C to stop)\n`)
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await server.close()
  return 0
}
