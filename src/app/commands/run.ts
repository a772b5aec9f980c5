import { parseArgs } from 'node:util'
import { errorText } from '../../core/errors.js'
import { startAppliance } from '../appliance.js'
import { ConfigError } from '../config/errors.js'
import { loadConfig } from '../config/load.js'
import { runProblems } from '../config/startup.js'
import { createLogger } from '../logger.js'
import { Watchdog } from '../watchdog.js'

/**
 * `nocturn run [--config path]`: the appliance. Runs until SIGTERM (systemd stop) or SIGINT, then
 * closes cleanly: pending approvals withdrawn, the status marked offline, the store closed.
 */
export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { config: { type: 'string' } } })
  let loaded: ReturnType<typeof loadConfig>
  try {
    loaded = loadConfig({ ...(values.config !== undefined && { path: values.config }) })
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`)
      return 2
    }
    throw err
  }
  const problems = runProblems(loaded)
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n`)
    return 2
  }
  const logger = createLogger({ level: process.env.NOCTURN_LOG_LEVEL ?? loaded.config.logLevel })
  // A stuck event loop cannot run any handler: a worker thread notices and kills the process, and
  // systemd restarts it. (A microphone that stops delivering is the capture watchdog's: it restarts
  // capture and shows the error on the LED, without killing a process that may just be muted.)
  const watchdog = new Watchdog({ loopLimitMs: 15_000 })
  // Heard from before the start: a stop asked for while starting (`nocturn_running` is logged just
  // before start returns) is kept for the clean stop below, not the default kill without a close.
  const stopAsked = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve)
    process.once('SIGINT', resolve)
  })
  let appliance: Awaited<ReturnType<typeof startAppliance>>
  try {
    appliance = await startAppliance({
      loaded,
      logger,
      env: process.env,
      input: process.stdin,
      output: process.stdout,
    })
  } catch (err) {
    // startAppliance closed what it had opened; the watchdog goes too, and the caller exits
    // non-zero at once so systemd's Restart= (or the person at the terminal) sees the failure.
    await watchdog.stop()
    const message = errorText(err)
    logger.error(
      { event: 'start_failed', code: (err as { code?: string }).code, err: message },
      'start failed',
    )
    process.stderr.write(`nocturn: ${message}\n`)
    return 1
  }
  await stopAsked
  logger.info({}, 'stopping')
  await appliance.close()
  await watchdog.stop()
  return 0
}
