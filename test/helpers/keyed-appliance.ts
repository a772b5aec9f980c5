import { join } from 'node:path'
import { PassThrough, Writable } from 'node:stream'
import { startAppliance } from '../../src/app/appliance.js'
import type { Appliance } from '../../src/app/compose/appliance-contract.js'
import type { Logger } from '../../src/core/logger.js'
import { wavApplianceConfig } from './wav-appliance.js'

/**
 * The appliance on WAV audio (its microphone's file looping) with the terminal panel, whose keys
 * are the button: `keys.write('m')` is a short press. Its store is `<work>/nocturn.db` unless
 * `extra.store` says otherwise; the phone app is not served.
 */
export async function keyedAppliance(
  work: string,
  baseUrl: string,
  logger: Logger,
  extra: Record<string, unknown> = {},
): Promise<{ appliance: Appliance; keys: PassThrough }> {
  const keys = new PassThrough()
  const appliance = await startAppliance({
    loaded: wavApplianceConfig(work, baseUrl, join(work, 'nocturn.db'), {
      panel: { backend: 'terminal' },
      phoneApp: { enabled: false },
      ...extra,
    }),
    logger,
    wavLoop: true,
    input: keys as unknown as NodeJS.ReadStream,
    output: new Writable({ write: (_c, _e, done) => done() }) as unknown as NodeJS.WriteStream,
  })
  return { appliance, keys }
}
