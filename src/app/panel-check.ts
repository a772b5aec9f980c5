import { accessSync, constants, existsSync, readdirSync } from 'node:fs'
import { release } from 'node:os'
import { join } from 'node:path'
import { parseGpiodVersion, runCommand } from '../adapters/gpiod/version.js'
import { headerBase } from '../adapters/rpi-gpio/sysfs.js'
import { errorText } from '../core/errors.js'
import type { ResolvedPanel } from './config/load.js'

export type PanelBackend = ResolvedPanel['backend']

export interface PanelCheckItem {
  readonly name: string
  readonly status: 'ok' | 'warn' | 'fail'
  /** What was found, in plain words. */
  readonly detail: string
  /** What to do about it, when not ok. */
  readonly fix?: string
}

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
  const checks: PanelCheckItem[] = []
  const kernelAtLeast66 = atLeast(kernel, 6, 6)

  checks.push({
    name: 'kernel',
    status: 'ok',
    detail: kernelAtLeast66
      ? `Linux ${kernel}: GPIO through the character device (sysfs numbers moved on 6.6 and later)`
      : `Linux ${kernel}: before 6.6, sysfs GPIO with plain BCM numbers still works`,
  })

  const devDir = join(root, 'dev')
  const gpiochips = safeList(devDir)
    .filter((n) => /^gpiochip\d+$/.test(n))
    .sort()
  if (gpiochips.length === 0) {
    checks.push({
      name: 'gpio chips',
      status: 'warn',
      detail: 'no /dev/gpiochip* on this machine',
      fix: 'on a Raspberry Pi this means the device is hidden (PrivateDevices=yes in a unit?) or this is not a Pi; use panel.backend "terminal" or "none" elsewhere',
    })
  } else {
    const writable = gpiochips.filter((c) => canReadWrite(join(devDir, c)))
    checks.push(
      writable.length === gpiochips.length
        ? {
            name: 'gpio chips',
            status: 'ok',
            detail: `${gpiochips.join(', ')} readable and writable`,
          }
        : {
            name: 'gpio chips',
            status: 'fail',
            detail: `${gpiochips.join(', ')} present but this user may not open ${gpiochips.filter((c) => !writable.includes(c)).join(', ')}`,
            fix: 'add the user to the gpio group (sudo usermod -aG gpio nocturn) and start a new session; the systemd unit sets SupplementaryGroups=gpio',
          },
    )
  }

  const version = await runCommand('gpiomon', ['--version'], env)
  const libgpiod = version.spawnError
    ? undefined
    : parseGpiodVersion(`${version.stdout}${version.stderr}`)
  checks.push(
    libgpiod
      ? {
          name: 'libgpiod tools',
          status: 'ok',
          detail: `gpiomon/gpioset from libgpiod ${libgpiod}.x`,
        }
      : {
          name: 'libgpiod tools',
          status: gpiochips.length > 0 ? 'fail' : 'warn',
          detail: version.spawnError
            ? 'gpiomon is not installed'
            : 'gpiomon did not say its version',
          fix: 'sudo apt install gpiod',
        },
  )

  const sysGpio = join(root, 'sys', 'class', 'gpio')
  const sysfsGpio = existsSync(sysGpio)
  let sysfsDetail = sysfsGpio
    ? `${sysGpio} present`
    : 'no /sys/class/gpio (removed or not enabled in this kernel)'
  if (sysfsGpio) {
    try {
      const base = headerBase(sysGpio)
      sysfsDetail += `, header chip base ${base}${base > 0 ? ` (GPIO17 is ${base + 17} there; raw 17 gives EINVAL)` : ''}`
    } catch (err) {
      sysfsDetail += ` (${errorText(err)})`
    }
  }
  checks.push({ name: 'sysfs gpio', status: 'ok', detail: sysfsDetail })

  // The character device wherever it exists (every kernel since 4.8); sysfs only where it is all
  // there is; otherwise no GPIO at all.
  const recommended: PanelBackend = gpiochips.length > 0 ? 'gpiod' : sysfsGpio ? 'rpi-gpio' : 'none'

  const configured = opts.panel
  if (configured) {
    const b = configured.backend
    if (b === 'rpi-gpio' && kernelAtLeast66) {
      checks.push({
        name: 'panel backend',
        // A fail even where sysfs still exists: the design card's rpi-gpio raw numbers give EINVAL
        // here, and sysfs GPIO is deprecated and gone from many current kernels.
        status: 'fail',
        detail: `rpi-gpio on Linux ${kernel}: the rpi-gpio package's raw numbers fail with EINVAL from 6.6 (the header chip moved to a high base); sysfs GPIO is deprecated${sysfsGpio ? '' : ' and absent here'}`,
        fix: 'use gpiod: set panel.backend to "gpiod" and install gpiod (sudo apt install gpiod)',
      })
    } else if ((b === 'gpiod' || b === 'rpi-gpio') && b !== recommended) {
      checks.push({
        name: 'panel backend',
        status: 'fail',
        detail: `panel.backend is "${b}" but this board needs "${recommended}"`,
        fix: `set panel.backend to "${recommended}"`,
      })
    } else {
      checks.push({
        name: 'panel backend',
        status: 'ok',
        detail: `panel.backend "${b}" suits this board`,
      })
    }
    if (b === 'gpiod' && libgpiod) {
      for (const [role, line] of [
        ['button', configured.button],
        ['led', configured.led],
      ] as const) {
        if (!line) continue
        // 1.x: gpiofind maps a name to chip and offset; 2.x: gpioinfo accepts line names.
        const r =
          libgpiod === 1
            ? await runCommand('gpiofind', [line], env)
            : await runCommand('gpioinfo', [line], env)
        checks.push(
          r.code === 0
            ? {
                name: `panel.${role}`,
                status: 'ok',
                detail: `${line} found (${r.stdout.trim().split('\n')[0]})`,
              }
            : {
                name: `panel.${role}`,
                status: 'fail',
                detail: `no GPIO line called ${line}`,
                fix: 'list the lines with "gpioinfo" and set the pin by its name (GPIO0…GPIO27)',
              },
        )
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

function atLeast(kernel: string, major: number, minor: number): boolean {
  const m = /^(\d+)\.(\d+)/.exec(kernel)
  if (!m) return true // unknown: assume current
  const [a, b] = [Number(m[1]), Number(m[2])]
  return a > major || (a === major && b >= minor)
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

function canReadWrite(path: string): boolean {
  try {
    accessSync(path, constants.R_OK | constants.W_OK)
    return true
  } catch {
    return false
  }
}
