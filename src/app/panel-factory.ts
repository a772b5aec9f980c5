import type { Logger } from '../core/logger.js'
import { NullPanel } from '../panel/null-panel.js'
import type { Clock } from '../ports/clock.js'
import type { Panel } from '../ports/panel.js'
import type { ResolvedPanel } from './config/load.js'

export interface PanelDeps {
  readonly clock: Clock
  readonly logger: Logger
  readonly env?: NodeJS.ProcessEnv
  readonly input?: NodeJS.ReadStream
  readonly output?: NodeJS.WriteStream
}

/**
 * The configured panel adapter. Each backend's module is imported only when chosen, so a board on
 * gpiod never loads the sysfs code and a laptop never spawns gpiomon.
 */
export async function createPanel(p: ResolvedPanel, deps: PanelDeps): Promise<Panel> {
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
