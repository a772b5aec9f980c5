import { PanelController } from '../../panel/panel-controller.js'
import { ShownState } from '../../panel/shown-state.js'
import type { VoiceDriver } from '../../voice/voice-driver.js'
import type { ResolvedPanel } from '../config/load.js'
import { listenMode } from '../config/schema.js'
import { createPanel } from '../panel-factory.js'
import type { DeviceMqtt, Terminal } from './broker.js'
import type { Composition } from './composition.js'

/** The button and the LED on the configured backend (GPIO, the terminal, or none). */
export async function composePanel(
  { config: { listen }, clock, log, closers }: Composition,
  config: ResolvedPanel,
  where: Terminal & { readonly env?: NodeJS.ProcessEnv | undefined },
): Promise<PanelController> {
  const panelLog = log.child({ component: 'panel' })
  const panel = new PanelController({
    panel: await createPanel(config, {
      clock,
      logger: panelLog,
      ...(where.env && { env: where.env }),
      ...(where.input && { input: where.input }),
      ...(where.output && { output: where.output }),
    }),
    clock,
    logger: panelLog,
    longPressMs: config.longPressMs,
    pressToTalk: listenMode(listen) === 'button',
  })
  closers.add(() => panel.close())
  return panel
}

/**
 * What the LED and the status show: the driver's state, or `error` and why while a device is
 * failing. `muted` is read at each change, from the driver made after this.
 */
export function showOnPanel(
  panel: PanelController,
  mqtt: DeviceMqtt | undefined,
  muted: () => boolean,
): ShownState {
  return new ShownState((state, reason) => {
    if (state !== 'muted') panel.setActivity(state)
    void mqtt?.status.setState(state, muted(), reason)
  })
}

/** The button's presses, to the driver; a mute shows on the status at once. */
export function wireButton(
  panel: PanelController,
  driver: VoiceDriver,
  shown: ShownState,
  mqtt: DeviceMqtt | undefined,
): void {
  panel.on((e) => {
    if (e.kind === 'mute') {
      driver.setMuted(e.muted)
      void mqtt?.status.setState(shown.reason ? 'error' : driver.state, e.muted, shown.reason)
    } else if (e.kind === 'stop_speaking') driver.stopSpeaking()
  })
}
