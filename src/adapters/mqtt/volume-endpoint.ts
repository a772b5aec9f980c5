import { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { DeviceState } from '../../device/device-state.js'
import { deviceOpArgSchemas } from '../../protocol/device-ops.js'
import { args, type PhoneRequests } from './phone-requests.js'

/**
 * The speaker's volume from a phone (docs/protocol.md, "Speaker volume"): a signed `set_volume`
 * on the phones' request channel, into the device's state like the button's and Home
 * Assistant's. What plays follows it through the one gain stage, alerts never below their floor
 * (audio/gain-out.ts). A value outside 0–100 or not whole is refused, not clamped.
 */
export function serveVolume(
  requests: PhoneRequests,
  device: Pick<DeviceState, 'setVolume'>,
  logger: Logger,
): void {
  requests.serve({
    set_volume: (ask) => {
      const { volume } = args(deviceOpArgSchemas.set_volume, ask.request.args)
      if (!Number.isInteger(volume) || volume < 0 || volume > 100) {
        throw new NocturnError(
          'NOC_ERR_BAD_REQUEST',
          'volume: expected a whole number from 0 to 100',
        )
      }
      const set = device.setVolume(volume, 'phone')
      logger.info({ phone: ask.request.phone, volume: set }, 'volume set from phone')
      ask.reply('done', { volume: set })
    },
  })
}
