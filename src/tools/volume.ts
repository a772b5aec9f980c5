import type { Tool } from '../core/types.js'
import type { DeviceState } from '../device/device-state.js'

/** Harmless and reversible, like the timers: allowed by voice too. Configuration may tighten it. */
const HARMLESS = { voice: 'allow', text: 'allow' } as const

/** How far "louder" and "quieter" move the volume when no number is said. */
const VOLUME_NUDGE = 15

/**
 * set_volume: "volume 30 percent", "quieter", "louder", "what's the volume". The model maps words
 * to `percent` or `change`; the device's state holds the volume (and the store remembers it).
 */
export function volumeTool(device: DeviceState): Tool {
  const tool: Tool<{ percent?: number; change?: 'louder' | 'quieter' }> = {
    name: 'set_volume',
    description: `Sets the speaker's volume. Give "percent" (0–100) for an exact level, or "change": "louder" or "quieter" to move it by ${VOLUME_NUDGE} points. With neither, reports the volume.`,
    parameters: {
      type: 'object',
      properties: {
        percent: { type: 'integer', minimum: 0, maximum: 100, description: 'The volume, 0–100.' },
        change: { type: 'string', enum: ['louder', 'quieter'] },
      },
      additionalProperties: false,
    },
    policy: HARMLESS,
    describe: (a) =>
      a.percent !== undefined
        ? `set the volume to ${a.percent} %`
        : a.change
          ? `make the speaker ${a.change}`
          : 'tell the volume',
    async call(ctx, a) {
      const before = device.volume
      const by = ctx.channel === 'voice' ? 'voice' : 'phone'
      if (a.percent !== undefined) device.setVolume(a.percent, by)
      else if (a.change === 'louder') device.setVolume(before + VOLUME_NUDGE, by)
      else if (a.change === 'quieter') device.setVolume(before - VOLUME_NUDGE, by)
      return { volume: device.volume, before }
    },
  }
  return tool as Tool
}
