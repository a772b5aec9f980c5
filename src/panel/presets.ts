/** A header line by name, as every Pi's kernel names it (`GPIO0`…`GPIO27`, docs/design.md §6). */
export type LineName = `GPIO${number}`

export interface PanelPins {
  /** The push button; absent when the board has none. */
  readonly button?: LineName
  /** The LED; absent when the board has no plain GPIO LED (e.g. APA102 LEDs on SPI). */
  readonly led?: LineName
  /** Pressed reads low: the button pulls the line to ground against a pull-up. */
  readonly buttonActiveLow: boolean
  readonly ledActiveLow: boolean
  /** APA102 colour LEDs on SPI: the spidev device and how many. */
  readonly rgbLeds?: { readonly device: string; readonly count: number }
}

export type PresetName = 'respeaker-2mic' | 'aiy-voice-hat' | 'custom'

/**
 * Known boards (hardware/wiring.md). The ReSpeaker 2-Mic HAT's LEDs are three APA102s on SPI
 * (chip select 1), not a GPIO line: its preset has the button and those.
 */
export const PRESETS: Readonly<Record<Exclude<PresetName, 'custom'>, PanelPins>> = {
  'respeaker-2mic': {
    button: 'GPIO17',
    buttonActiveLow: true,
    ledActiveLow: false,
    rgbLeds: { device: '/dev/spidev0.1', count: 3 },
  },
  'aiy-voice-hat': { button: 'GPIO23', led: 'GPIO25', buttonActiveLow: true, ledActiveLow: false },
}

/** The header lines a Raspberry Pi exposes by name. */
export const HEADER_LINE = /^GPIO([0-9]|1[0-9]|2[0-7])$/
