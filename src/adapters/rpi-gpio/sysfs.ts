import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The sysfs number of a header line. Before kernel 6.6 the Pi's header chip started at 0, so
 * GPIO17 was 17 — what rpi-gpio writes to /sys/class/gpio/export. From 6.6 the chip has a high base
 * (Pi 4: 512, Pi 5: 571) and writing 17 fails with EINVAL (docs/design.md §6). Reading
 * the base from the chip's own `base` file works on both.
 */
export function sysfsNumber(sysGpio: string, line: string): number {
  const m = /^GPIO(\d+)$/.exec(line)
  if (!m) throw new Error(`${line} is not a header line name (GPIO0…GPIO27)`)
  return headerBase(sysGpio) + Number(m[1])
}

// The header's chip by label: Pi 1–3 / Zero, Pi 4, Pi 5 (RP1). Not the firmware expander chip.
const HEADER_LABELS = /^(pinctrl-bcm2835|pinctrl-bcm2711|pinctrl-rp1)$/

/** The base of the chip that carries the 40-pin header, from /sys/class/gpio/gpiochipN/{label,base}. */
export function headerBase(sysGpio: string): number {
  let entries: string[]
  try {
    entries = readdirSync(sysGpio).filter((e) => /^gpiochip\d+$/.test(e))
  } catch (err) {
    throw new Error(
      `${sysGpio} is not there (${(err as NodeJS.ErrnoException).code}): this kernel has no sysfs GPIO; use panel.backend "gpiod"`,
    )
  }
  const chips = entries.map((e) => ({
    label: readFileSync(join(sysGpio, e, 'label'), 'utf8').trim(),
    base: Number(readFileSync(join(sysGpio, e, 'base'), 'utf8').trim()),
  }))
  const header = chips.find((c) => HEADER_LABELS.test(c.label))
  if (!header) {
    throw new Error(
      `no Raspberry Pi header chip among ${chips.map((c) => c.label).join(', ') || 'no chips'} in ${sysGpio}`,
    )
  }
  return header.base
}
