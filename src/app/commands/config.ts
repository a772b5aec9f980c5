import { parseArgs } from 'node:util'
import { errorText } from '../../core/errors.js'
import { checkPcms } from '../config/check-pcms.js'
import { ConfigError } from '../config/errors.js'
import { EXAMPLE_CONFIG } from '../config/example.js'
import { loadConfig } from '../config/load.js'

export const HELP = `usage: nocturn config --example
       nocturn config --check [--config <path>]

  --example        print a commented example configuration
  --check          validate the configuration (default /etc/nocturn/config.json, or $NOCTURN_CONFIG)
  --config <path>  the file to check
With audio.backend "alsa", --check also asks ALSA whether the two PCMs exist (playing 0.1 s of
silence).
Exit code 2 when the configuration is not usable; each problem is one line naming the key.
`

/** `nocturn config`: print the example, or check a file the way `nocturn run` will read it. */
export async function run(args: string[]): Promise<number> {
  let values: { example?: boolean; check?: boolean; config?: string; help?: boolean }
  try {
    ;({ values } = parseArgs({
      args,
      options: {
        example: { type: 'boolean' },
        check: { type: 'boolean' },
        config: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }))
  } catch (err) {
    process.stderr.write(`nocturn config: ${errorText(err)}\n\n${HELP}`)
    return 2
  }
  if (values.help) {
    process.stdout.write(HELP)
    return 0
  }
  if (values.example) {
    process.stdout.write(EXAMPLE_CONFIG)
    return 0
  }
  if (values.check || values.config) {
    try {
      const loaded = loadConfig({ ...(values.config ? { path: values.config } : {}) })
      const c = loaded.config
      const pcmProblems = await checkPcms(c)
      if (pcmProblems.length > 0) throw new ConfigError(pcmProblems.map((p) => p.line))
      process.stdout.write(
        [
          `${loaded.path}: ok`,
          `  panel: ${loaded.panel.backend}${loaded.panel.button ? `, button ${loaded.panel.button}` : ''}${loaded.panel.led ? `, LED ${loaded.panel.led}` : ''}`,
          `  audio: ${c.audio.backend} (${c.audio.capturePcm} → ${c.audio.playbackPcm}, echo ${c.audio.echo})`,
          `  API key: ${loaded.secretSources.apiKey === 'none' ? 'not set' : `from ${loaded.secretSources.apiKey}`}`,
          `  broker: ${c.mqtt ? `${c.mqtt.url} as ${c.mqtt.deviceId}` : 'not configured'}`,
          `  home actions: ${c.homeActions.map((a) => a.name).join(', ') || 'none'}`,
          '',
        ].join('\n'),
      )
      return 0
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err
      for (const p of err.problems) process.stderr.write(`${p}\n`)
      return 2
    }
  }
  process.stderr.write(HELP)
  return 2
}
