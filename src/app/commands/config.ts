import { parseArgs } from 'node:util'
import { errorText } from '../../core/errors.js'
import { checkPcms } from '../config/check-pcms.js'
import { ConfigError } from '../config/errors.js'
import { EXAMPLE_CONFIG } from '../config/example.js'
import { loadConfig } from '../config/load.js'
import { type Config, listenMode } from '../config/schema.js'
import { missingWakeFiles, wakeInstallFix } from '../wake-detector.js'

export const USAGE = `usage: nocturn config --example
       nocturn config --check [--config <path>]

  --example        print a commented example configuration
  --check          validate the configuration (default /etc/nocturn/config.json, or $NOCTURN_CONFIG)
  --config <path>  the file to check
With audio.backend "alsa", --check also asks ALSA whether the two PCMs exist (playing 0.1 s of
silence); with listen.mode "wake", whether the wake-word model files are installed.
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
    process.stderr.write(`nocturn config: ${errorText(err)}\n\n${USAGE}`)
    return 2
  }
  if (values.help) {
    process.stdout.write(USAGE)
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
      const mode = listenMode(c.listen)
      const problems = [...(await checkPcms(c)).map((p) => p.line), ...wakeProblems(c)]
      if (problems.length > 0) throw new ConfigError(problems)
      const audio =
        c.audio.backend === 'wav'
          ? `wav (${c.audio.inputWav} → ${c.audio.outputWav ?? 'no file'})`
          : `${c.audio.backend} (${c.audio.capturePcm} → ${c.audio.playbackPcm}, echo ${c.audio.echo})`
      process.stdout.write(
        [
          `${loaded.path}: ok`,
          `  panel: ${loaded.panel.backend}${loaded.panel.button ? `, button ${loaded.panel.button}` : ''}${loaded.panel.led ? `, LED ${loaded.panel.led}` : ''}`,
          `  audio: ${audio}`,
          `  listen: ${mode}${mode === 'wake' && c.listen.wake ? ` (${c.listen.wake.models.map((m) => m.phrase ?? m.model).join(', ')})` : ''}`,
          `  API key: ${loaded.secretSources.apiKey === 'none' ? 'not set' : `from ${loaded.secretSources.apiKey}`}`,
          `  broker: ${c.mqtt ? `${c.mqtt.url} as ${c.mqtt.deviceId}` : 'not configured'}`,
          `  home actions: ${c.homeActions.map((a) => a.name).join(', ') || 'none'}`,
          `  home assistant: ${c.homeAssistant ? `${c.homeAssistant.url}${c.homeAssistant.area ? ` (area ${c.homeAssistant.area})` : ', no area'}, token ${c.homeAssistant.token ? 'set' : 'not set'}` : 'not configured'}`,
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
  process.stderr.write(USAGE)
  return 2
}

/**
 * In wake mode, the model files must be there: without them `nocturn run` keeps the button and the
 * LED but never opens a session, so the configuration cannot do what it says.
 */
function wakeProblems(c: Config): string[] {
  const wake = c.listen.wake
  if (listenMode(c.listen) !== 'wake' || !wake) return []
  try {
    const missing = missingWakeFiles(wake)
    return missing.length === 0
      ? []
      : [
          `listen.wake: missing model file${missing.length > 1 ? 's' : ''} ${missing.join(', ')} — ${wakeInstallFix(wake)}`,
        ]
  } catch (err) {
    return [errorText(err)]
  }
}
