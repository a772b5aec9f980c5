import { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { SpeakerSettings } from '../../ports/speaker-settings.js'
import { deviceOpArgSchemas } from '../../protocol/device-ops.js'
import { args } from '../../protocol/op-args.js'
import { isSensitivity, SENSITIVITIES } from '../../protocol/sensitivity.js'
import type { PhoneRequests } from './phone-requests.js'

/**
 * The speaker's own settings from a phone (docs/protocol.md, "Speaker settings"): a signed
 * `set_volume` or `set_sensitivity` on the phones' request channel, into the device's state like
 * the button's and Home Assistant's. What plays follows the volume through the one gain stage,
 * alerts never below their floor (audio/gain-out.ts); the wake detector follows the sensitivity.
 * A value out of range is refused, not clamped; so is a sensitivity where there is no wake word.
 */
export function serveSettings(
  requests: PhoneRequests,
  device: SpeakerSettings,
  options: {
    /** The speaker listens for a wake word (listen.mode `wake`): it has a sensitivity to set. */
    readonly wakeWord: boolean
    readonly logger: Logger
  },
): void {
  const { logger } = options
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
    set_sensitivity: (ask) => {
      const { sensitivity } = args(deviceOpArgSchemas.set_sensitivity, ask.request.args)
      if (!options.wakeWord) {
        throw new NocturnError(
          'NOC_ERR_BAD_REQUEST',
          'sensitivity: this speaker listens without a wake word (listen.mode is not "wake"), so there is none to set',
        )
      }
      if (!isSensitivity(sensitivity)) {
        throw new NocturnError(
          'NOC_ERR_BAD_REQUEST',
          `sensitivity: expected one of ${SENSITIVITIES.join(', ')}`,
        )
      }
      device.setSensitivity(sensitivity, 'phone')
      logger.info({ phone: ask.request.phone, sensitivity }, 'wake sensitivity set from phone')
      ask.reply('done', { sensitivity: device.sensitivity })
    },
  })
}
