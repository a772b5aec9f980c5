import { existsSync, readFileSync, statSync } from 'node:fs'
import { spiDeviceLoads } from '../../adapters/apa102/spi-bus.js'
import type { Check } from './check.js'
import type { DeviceDoctorContext } from './device-context.js'

/** The ReSpeaker's LEDs need SPI: the firmware's `dtparam=spi=on` and the spidev device. */
export const spiCheck: Check<DeviceDoctorContext> = {
  name: 'spi',
  async run(ctx) {
    const leds = ctx.loaded?.panel.rgbLeds
    if (!leds) return { status: 'skip', summary: 'no APA102 LEDs configured (panel.rgbLeds)' }
    const bootPaths = ctx.bootConfigPaths ?? ['/boot/firmware/config.txt', '/boot/config.txt']
    const boot = bootPaths.find((p) => existsSync(p))
    const enabled = boot
      ? /^\s*dtparam=(?:[^#\n]*,)?spi=on\b/m.test(readFileSync(boot, 'utf8'))
      : undefined
    const device = statOrUndefined(leds.device)
    const data = { device: leds.device, bootConfig: boot ?? null, spiOn: enabled ?? null }
    const details = [
      boot
        ? `${boot}: ${enabled ? 'dtparam=spi=on' : 'no dtparam=spi=on'}`
        : 'no firmware config.txt found (not a Raspberry Pi?)',
    ]
    if (!device) {
      return {
        status: 'fail',
        summary: `${leds.device} is missing: the LEDs stay dark`,
        details: [
          ...details,
          enabled
            ? 'fix: SPI is enabled but the device is missing: reboot after enabling it'
            : `fix: add dtparam=spi=on to ${boot ?? '/boot/firmware/config.txt'} (or raspi-config → Interface Options → SPI) and reboot`,
        ],
        data,
      }
    }
    if (!device.isCharacterDevice()) {
      return {
        status: 'warn',
        summary: `${leds.device} is not an SPI device (a stand-in file?)`,
        details,
        data,
      }
    }
    if (!(await spiDeviceLoads())) {
      return {
        status: 'fail',
        summary: `${leds.device} is there, but the optional package spi-device is not installed`,
        details: [
          ...details,
          'fix: sudo apt install build-essential python3, then npm ci again (it compiles at install)',
        ],
        data,
      }
    }
    return { status: 'ok', summary: `${leds.device} is there for the LEDs`, details, data }
  },
}

function statOrUndefined(path: string) {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}
