/** The argv `arecord` and `aplay` share: quiet, a named PCM, raw 16-bit little-endian mono at `rateHz`. */
export function pcmArgs(device: string, rateHz: number): string[] {
  return ['-q', '-D', device, '-t', 'raw', '-f', 'S16_LE', '-r', String(rateHz), '-c', '1']
}
