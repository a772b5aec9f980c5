import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { ColourLedBlinker } from '../panel/colour-led-blinker.js'
import { NullPanel } from '../panel/null-panel.js'
import { PanelWithLeds } from '../panel/panel-with-leds.js'
import type { Clock } from '../ports/clock.js'
import type { Panel } from '../ports/panel.js'
import type { ResolvedPanel } from './config/load.js'

export interface PanelDeps {
  readonly clock: Clock
  readonly logger: Logger
  readonly env?: NodeJS.ProcessEnv
  readonly input?: NodeJS.ReadStream
  readonly output?: NodeJS.WriteStream
  /** What the terminal panel's keys do in this listen mode. */
  readonly keys?: string
}

/**
 * The configured panel adapter. Each backend's module is imported only when chosen, so a board on
 * gpiod never loads the sysfs code and a laptop never spawns gpiomon.
 */
export async function createPanel(p: ResolvedPanel, deps: PanelDeps): Promise<Panel> {
  const panel = await buttonPanel(p, deps)
  if (!p.rgbLeds || (p.backend !== 'gpiod' && p.backend !== 'rpi-gpio')) return panel
  const logger = deps.logger.child({ panel: 'apa102' })
  const { Apa102Leds } = await import('../adapters/apa102/apa102-leds.js')
  try {
    const leds = await Apa102Leds.open({ ...p.rgbLeds, logger })
    const blinker = new ColourLedBlinker(deps.clock, (c) => leds.show(c), {
      count: p.rgbLeds.count,
      paint: (colours) => leds.showEach(colours),
    })
    return new PanelWithLeds(panel, {
      show: (state) => blinker.show(state),
      showLevel: (percent) => blinker.showLevel(percent),
      close: async () => {
        blinker.stop()
        await leds.close()
      },
    })
  } catch (err) {
    // The lights are a courtesy: without them the speaker still hears and speaks (doctor says why).
    logger.error(
      { event: 'apa102_leds_unavailable', device: p.rgbLeds.device, err: errorText(err) },
      'APA102 LEDs unavailable; running without them',
    )
    return panel
  }
}

async function buttonPanel(p: ResolvedPanel, deps: PanelDeps): Promise<Panel> {
  const logger = deps.logger.child({ panel: p.backend })
  switch (p.backend) {
    case 'gpiod': {
      const { GpiodPanel } = await import('../adapters/gpiod/gpiod-panel.js')
      return new GpiodPanel({
        ...pins(p),
        debounceMs: p.debounceMs,
        clock: deps.clock,
        logger,
        ...(deps.env ? { env: deps.env } : {}),
      })
    }
    case 'rpi-gpio': {
      const { SysfsPanel } = await import('../adapters/rpi-gpio/sysfs-panel.js')
      return new SysfsPanel({ ...pins(p), debounceMs: p.debounceMs, clock: deps.clock, logger })
    }
    case 'terminal': {
      const { TerminalPanel } = await import('../adapters/terminal-panel/terminal-panel.js')
      return new TerminalPanel({
        input: deps.input ?? process.stdin,
        output: deps.output ?? process.stderr,
        clock: deps.clock,
        holdMs: p.longPressMs + 400,
        ...(deps.keys && { keys: deps.keys }),
      })
    }
    case 'none':
      return new NullPanel()
  }
}

function pins(p: ResolvedPanel) {
  return {
    ...(p.button ? { button: p.button } : {}),
    ...(p.led ? { led: p.led } : {}),
    buttonActiveLow: p.buttonActiveLow,
    ledActiveLow: p.ledActiveLow,
  }
}
