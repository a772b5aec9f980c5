import { parseArgs } from 'node:util'

/**
 * `nocturn devices [--backend alsa|portaudio]`: the capture and playback devices of the chosen
 * backend, by the names Nocturn's config takes. Only the chosen backend is loaded.
 */
export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { backend: { type: 'string', default: 'alsa' } },
  })
  const backend = values.backend ?? 'alsa'
  let list: (direction: 'capture' | 'playback') => Promise<{ name: string; description: string }[]>
  if (backend === 'alsa') {
    const { listAlsaPcms } = await import('../../adapters/alsa/alsa-devices.js')
    list = (d) => listAlsaPcms(d)
  } else if (backend === 'portaudio') {
    const { loadNaudiodon } = await import('../../adapters/portaudio/naudiodon.js')
    const { listPortAudioDevices } = await import('../../adapters/portaudio/portaudio-devices.js')
    const pa = loadNaudiodon()
    list = async (d) => listPortAudioDevices(pa, d)
  } else {
    process.stderr.write(`nocturn devices: unknown backend "${backend}" (alsa, portaudio)\n`)
    return 2
  }
  for (const direction of ['capture', 'playback'] as const) {
    const devices = await list(direction)
    process.stdout.write(`${direction} (${backend}):\n`)
    if (devices.length === 0) process.stdout.write('  (none)\n')
    for (const d of devices) {
      process.stdout.write(`  ${d.name}${d.description ? `  — ${d.description}` : ''}\n`)
    }
  }
  if (backend === 'alsa') {
    process.stdout.write(
      '\nUse these names (never card numbers). A PCM you define in /etc/asound.conf is listed only\nwith a hint { show on; description "…" } block.\n',
    )
  }
  return 0
}
