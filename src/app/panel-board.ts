import { accessSync, constants, existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { parseGpiodVersion, runCommand } from '../adapters/gpiod/version.js'
import { headerBase } from '../adapters/rpi-gpio/sysfs.js'
import { errorText } from '../core/errors.js'

/** One line of the panel's verdict in `nocturn doctor`. */
export interface PanelCheckItem {
  readonly name: string
  readonly status: 'ok' | 'warn' | 'fail'
  /** What was found, in plain words. */
  readonly detail: string
  /** What to do about it, when not ok. */
  readonly fix?: string
}

/** The kernel: 6.6 or later moved the sysfs numbers, so raw BCM numbers give EINVAL. */
export function kernelCheck(kernel: string): { kernelAtLeast66: boolean; item: PanelCheckItem } {
  const kernelAtLeast66 = atLeast(kernel, 6, 6)
  return {
    kernelAtLeast66,
    item: {
      name: 'kernel',
      status: 'ok',
      detail: kernelAtLeast66
        ? `Linux ${kernel}: GPIO through the character device (sysfs numbers moved on 6.6 and later)`
        : `Linux ${kernel}: before 6.6, sysfs GPIO with plain BCM numbers still works`,
    },
  }
}

/** The GPIO character devices under `root`/dev, and whether this user may open each. */
export function gpioChipCheck(root: string): { gpiochips: string[]; item: PanelCheckItem } {
  const devDir = join(root, 'dev')
  const gpiochips = safeList(devDir)
    .filter((n) => /^gpiochip\d+$/.test(n))
    .sort()
  if (gpiochips.length === 0) {
    return {
      gpiochips,
      item: {
        name: 'gpio chips',
        status: 'warn',
        detail: 'no /dev/gpiochip* on this machine',
        fix: 'on a Raspberry Pi this means the device is hidden (PrivateDevices=yes in a unit?) or this is not a Pi; use panel.backend "terminal" or "none" elsewhere',
      },
    }
  }
  const writable = gpiochips.filter((c) => canReadWrite(join(devDir, c)))
  return {
    gpiochips,
    item:
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
  }
}

/** The libgpiod tools and their major version; missing is a fail where there are chips to use. */
export async function libgpiodCheck(
  env: NodeJS.ProcessEnv,
  hasChips: boolean,
): Promise<{ libgpiod: 1 | 2 | undefined; item: PanelCheckItem }> {
  const version = await runCommand('gpiomon', ['--version'], env)
  const libgpiod = version.spawnError
    ? undefined
    : parseGpiodVersion(`${version.stdout}${version.stderr}`)
  return {
    libgpiod,
    item: libgpiod
      ? {
          name: 'libgpiod tools',
          status: 'ok',
          detail: `gpiomon/gpioset from libgpiod ${libgpiod}.x`,
        }
      : {
          name: 'libgpiod tools',
          status: hasChips ? 'fail' : 'warn',
          detail: version.spawnError
            ? 'gpiomon is not installed'
            : 'gpiomon did not say its version',
          fix: 'sudo apt install gpiod',
        },
  }
}

/** The deprecated sysfs GPIO under `root`, and where its header chip starts. */
export function sysfsCheck(root: string): { sysfsGpio: boolean; item: PanelCheckItem } {
  const sysGpio = join(root, 'sys', 'class', 'gpio')
  const sysfsGpio = existsSync(sysGpio)
  let detail = sysfsGpio
    ? `${sysGpio} present`
    : 'no /sys/class/gpio (removed or not enabled in this kernel)'
  if (sysfsGpio) {
    try {
      const base = headerBase(sysGpio)
      detail += `, header chip base ${base}${base > 0 ? ` (GPIO17 is ${base + 17} there; raw 17 gives EINVAL)` : ''}`
    } catch (err) {
      detail += ` (${errorText(err)})`
    }
  }
  return { sysfsGpio, item: { name: 'sysfs gpio', status: 'ok', detail } }
}

/** A GPIO line's name, looked up with the libgpiod tools of `libgpiod`'s major version. */
export async function lineCheck(
  role: string,
  line: string,
  libgpiod: 1 | 2,
  env: NodeJS.ProcessEnv,
): Promise<PanelCheckItem> {
  // 1.x: gpiofind maps a name to chip and offset; 2.x: gpioinfo accepts line names.
  const r =
    libgpiod === 1
      ? await runCommand('gpiofind', [line], env)
      : await runCommand('gpioinfo', [line], env)
  return r.code === 0
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
