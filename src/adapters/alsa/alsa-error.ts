import { NocturnError } from '../../core/errors.js'

export type Direction = 'capture' | 'playback'

/**
 * Turns how an `arecord`/`aplay` child ended into an error a person can act on. An unknown PCM
 * name is the common mistake, so it says which command lists the real ones.
 */
export function childExitError(
  tool: string,
  direction: Direction,
  device: string,
  exit: { code: number | null; signal: NodeJS.Signals | null; spawnError?: Error },
  stderr: string,
): NocturnError {
  if (exit.spawnError) {
    const missing = (exit.spawnError as NodeJS.ErrnoException).code === 'ENOENT'
    return new NocturnError(
      'NOC_ERR_AUDIO_DEVICE_FAILED',
      missing
        ? `${tool} is not installed (Debian: apt-get install alsa-utils)`
        : `${tool} could not be started: ${exit.spawnError.message}`,
      { cause: exit.spawnError },
    )
  }
  if (/Unknown PCM|audio open error: No such file or directory|No such device/i.test(stderr)) {
    return new NocturnError(
      'NOC_ERR_AUDIO_DEVICE_UNKNOWN',
      `ALSA ${direction} device "${device}" does not exist here; run "nocturn devices" to list the ones that do`,
    )
  }
  if (/Device or resource busy/i.test(stderr)) {
    return new NocturnError(
      'NOC_ERR_AUDIO_DEVICE_FAILED',
      `ALSA ${direction} device "${device}" is busy (another program holds it; a dsnoop/dmix PCM can share it)`,
    )
  }
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`
  const last = lastLine(stderr)
  return new NocturnError(
    'NOC_ERR_AUDIO_DEVICE_FAILED',
    `${tool} on ${direction} device "${device}" ${how}${last ? `: ${last}` : ''}`,
  )
}

function lastLine(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '')
  return (lines[lines.length - 1] ?? '').trim()
}

/**
 * Card numbers move between boots (a USB card plugged in first takes 0), so a PCM that names a
 * card by number is refused up front with the name to use instead.
 */
export function checkPcmName(device: string, direction: Direction): void {
  if (/^(plug)?hw:\d/.test(device) || /CARD=\d+(,|$)/.test(device)) {
    throw new NocturnError(
      'NOC_ERR_AUDIO_DEVICE_UNKNOWN',
      `ALSA ${direction} device "${device}" names a card by number, which changes between boots; use its name (plughw:CARD=<id>,DEV=0 or a PCM from /etc/asound.conf) — run "nocturn devices" to list them`,
    )
  }
}
