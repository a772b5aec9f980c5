import { release } from 'node:os'
import type { ResolvedPanel } from './config/load.js'
import {
  gpioChipCheck,
  kernelCheck,
  libgpiodCheck,
  lineCheck,
  type PanelCheckItem,
  sysfsCheck,
} from './panel-board.js'

type PanelBackend = ResolvedPanel['backend']

export interface PanelCheckResult {
  /** The backend this board needs. */
  readonly recommended: PanelBackend
  /** True when nothing failed (warnings allowed). */
  readonly ok: boolean
  readonly kernel: string
  /** Kernel 6.6 or later: raw sysfs numbers (rpi-gpio) fail with EINVAL. */
  readonly kernelAtLeast66: boolean
  readonly gpiochips: readonly string[]
  readonly sysfsGpio: boolean
  readonly libgpiod?: 1 | 2
  readonly checks: readonly PanelCheckItem[]
}

export interface PanelCheckOptions {
  /** The configured panel, to check the chosen backend and its pins. */
  readonly panel?: ResolvedPanel
  /** File-system root (tests point it at a fake tree). */
  readonly root?: string
  readonly kernelRelease?: string
  readonly env?: NodeJS.ProcessEnv
}

/**
 * What `nocturn doctor` says about the panel: which GPIO backend this board needs and why (kernel
 * version, /dev/gpiochip*, /sys/class/gpio, the libgpiod tools), whether this user may use it, and
 * whether the configured pins exist — each problem with a plain-language fix.
 */
export async function checkPanel(opts: PanelCheckOptions = {}): Promise<PanelCheckResult> {
  const root = opts.root ?? '/'
  const env = opts.env ?? process.env
  const kernel = opts.kernelRelease ?? release()
  const { kernelAtLeast66, item: kernelItem } = kernelCheck(kernel)
  const { gpiochips, item: chipsItem } = gpioChipCheck(root)
  const { libgpiod, item: toolsItem } = await libgpiodCheck(env, gpiochips.length > 0)
  const { sysfsGpio, item: sysfsItem } = sysfsCheck(root)
  const checks: PanelCheckItem[] = [kernelItem, chipsItem, toolsItem, sysfsItem]

  // The character device wherever it exists (every kernel since 4.8); sysfs only where it is all
  // there is; otherwise no GPIO at all.
  const recommended: PanelBackend = gpiochips.length > 0 ? 'gpiod' : sysfsGpio ? 'rpi-gpio' : 'none'

  const configured = opts.panel
  if (configured) {
    checks.push(backendCheck(configured.backend, recommended, kernel, kernelAtLeast66, sysfsGpio))
    if (configured.backend === 'gpiod' && libgpiod) {
      for (const [role, line] of [
        ['button', configured.button],
        ['led', configured.led],
      ] as const) {
        if (line) checks.push(await lineCheck(role, line, libgpiod, env))
      }
    }
  }

  return {
    recommended,
    ok: checks.every((c) => c.status !== 'fail'),
    kernel,
    kernelAtLeast66,
    gpiochips,
    sysfsGpio,
    ...(libgpiod ? { libgpiod } : {}),
    checks,
  }
}

/** Whether the configured backend suits this board and its kernel. */
function backendCheck(
  b: PanelBackend,
  recommended: PanelBackend,
  kernel: string,
  kernelAtLeast66: boolean,
  sysfsGpio: boolean,
): PanelCheckItem {
  if (b === 'rpi-gpio' && kernelAtLeast66) {
    return {
      name: 'panel backend',
      // A fail even where sysfs still exists: the design card's rpi-gpio raw numbers give EINVAL
      // here, and sysfs GPIO is deprecated and gone from many current kernels.
      status: 'fail',
      detail: `rpi-gpio on Linux ${kernel}: the rpi-gpio package's raw numbers fail with EINVAL from 6.6 (the header chip moved to a high base); sysfs GPIO is deprecated${sysfsGpio ? '' : ' and absent here'}`,
      fix: 'use gpiod: set panel.backend to "gpiod" and install gpiod (sudo apt install gpiod)',
    }
  }
  if ((b === 'gpiod' || b === 'rpi-gpio') && b !== recommended) {
    return {
      name: 'panel backend',
      status: 'fail',
      detail: `panel.backend is "${b}" but this board needs "${recommended}"`,
      fix: `set panel.backend to "${recommended}"`,
    }
  }
  return { name: 'panel backend', status: 'ok', detail: `panel.backend "${b}" suits this board` }
}
