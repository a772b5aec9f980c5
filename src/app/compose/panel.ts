import type { DeviceState } from '../../device/device-state.js'
import { PanelController } from '../../panel/panel-controller.js'
import type { ResolvedPanel } from '../config/load.js'
import { listenMode } from '../config/schema.js'
import { createPanel } from '../panel-factory.js'
import type { Terminal } from './broker.js'
import type { Composition } from './composition.js'

/**
 * How the button talks in each mode (hardware/button.md), and what that makes of the terminal
 * panel's two keys (`m` a short press, `s` a hold): wake mode's hold is for a loud room.
 */
function talkBy(mode: 'wake' | 'button' | 'speech'): { talk?: 'press' | 'hold'; keys: string } {
  if (mode === 'button') return { talk: 'press', keys: 'm: talk, s: mute' }
  if (mode === 'wake') return { talk: 'hold', keys: 'm: mute, s: stop talking, or talk' }
  return { keys: 'm: mute, s: stop talking' }
}

/**
 * The button and the LED on the configured backend (GPIO, the terminal, or none): the LED shows the
 * device's state, the button's gestures go into it (mute, stop, volume).
 */
export async function composePanel(
  { config: { listen }, clock, log, closers }: Composition,
  device: DeviceState,
  config: ResolvedPanel,
  where: Terminal & { readonly env?: NodeJS.ProcessEnv | undefined },
): Promise<PanelController> {
  const panelLog = log.child({ component: 'panel' })
  const { talk, keys } = talkBy(listenMode(listen))
  const panel = new PanelController({
    panel: await createPanel(config, {
      clock,
      logger: panelLog,
      ...(where.env && { env: where.env }),
      ...(where.input && { input: where.input }),
      ...(where.output && { output: where.output }),
      keys,
    }),
    clock,
    logger: panelLog,
    longPressMs: config.longPressMs,
    device,
    ...(talk && { talk }),
  })
  closers.add(() => panel.close())
  return panel
}
