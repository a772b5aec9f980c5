import { realClock } from '../adapters/clock/real-clock.js'
import type { Appliance, ApplianceOptions } from './compose/appliance-contract.js'
import { Closers, type Composition } from './compose/composition.js'
import { openConversationStore } from './compose/conversations.js'
import { composeDevice } from './compose/device.js'
import { composePanel } from './compose/panel.js'
import { checkProviderKeys } from './compose/providers.js'
import { loadWake } from './compose/wake-load.js'
import { composeWakeLog } from './compose/wake-log.js'

/**
 * Composition: the one place that reads the config and wires adapters to ports (docs/design.md §1).
 * Each concern is composed in its module under compose/; this keeps the order they start in up to
 * the panel and the wake models' load, compose/after-panel.ts the rest, and every part registers
 * its closer as it opens, so they close in the reverse order.
 */
export async function startAppliance(options: ApplianceOptions): Promise<Appliance> {
  const { config, panel: panelConfig } = options.loaded
  const log = options.logger
  const clock = options.clock ?? realClock()
  const closers = new Closers(log)
  const comp: Composition = { config, clock, log, closers }
  try {
    checkProviderKeys(config)
    const { store, feed } = openConversationStore(comp)
    const device = composeDevice(comp, store)
    const wakes = composeWakeLog(comp, store)
    const panel = await composePanel(comp, device, panelConfig, options)
    // The button answers (mute, the LED) from here on, before anything slower is composed; then
    // the wake models load on their own thread while the rest starts (issue 47): natively
    // 0.1–1 s, on WASM 10 s or more on a slow board.
    await panel.start()
    const wake = loadWake(comp, device, wakes)
    // The few ms until its thread is asked for the models, before the rest is composed: that
    // thread, not the composition, is what listening waits for.
    await wake?.asked
    // The rest is a chunk of its own, compiled and run only now: the button answered, and the
    // models' thread started, before it (issue 47).
    const { composeAfterPanel } = await import('./compose/after-panel.js')
    return await composeAfterPanel(options, comp, { store, feed, device, wakes, panel, wake })
  } catch (err) {
    await closers.close()
    throw err
  }
}
