import { NocturnError } from '../../core/errors.js'
import type { Naudiodon, NaudiodonDevice } from './naudiodon.js'

/**
 * PortAudio numbers devices by position in a list that changes when cards come and go, so Nocturn
 * names them (`plughw:CARD=…` or an /etc/asound.conf PCM) and looks the number up right before
 * opening the stream.
 */
export function resolvePortAudioDevice(
  pa: Naudiodon,
  name: string,
  direction: 'capture' | 'playback',
): NaudiodonDevice {
  const wanted = (d: NaudiodonDevice) =>
    direction === 'capture' ? d.maxInputChannels > 0 : d.maxOutputChannels > 0
  const found = pa.getDevices().find((d) => d.name === name && wanted(d))
  if (!found) {
    throw new NocturnError(
      'NOC_ERR_AUDIO_DEVICE_UNKNOWN',
      `PortAudio ${direction} device "${name}" does not exist here; run "nocturn devices --backend portaudio" to list the ones that do`,
    )
  }
  return found
}

export function listPortAudioDevices(
  pa: Naudiodon,
  direction: 'capture' | 'playback',
): { name: string; description: string }[] {
  return pa
    .getDevices()
    .filter((d) => (direction === 'capture' ? d.maxInputChannels > 0 : d.maxOutputChannels > 0))
    .map((d) => ({ name: d.name, description: `${d.hostAPIName} device ${d.id}` }))
}
