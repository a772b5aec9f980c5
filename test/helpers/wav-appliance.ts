import { join } from 'node:path'
import { type LoadedConfig, parseConfig } from '../../src/app/config/load.js'

const ROOT = join(import.meta.dirname, '../..')

/**
 * A configuration for an appliance on WAV audio (the offline fixture in, `<work>/speaker.wav`
 * out) talking to the fake Live service at `baseUrl`, its store at `store`; `extra` adds or
 * overrides top-level sections.
 */
export function wavApplianceConfig(
  work: string,
  baseUrl: string,
  store: string,
  extra: Record<string, unknown> = {},
): LoadedConfig {
  return parseConfig(
    JSON.stringify({
      provider: { model: 'gemini-2.5-flash-native-audio-preview-12-2025', baseUrl },
      audio: {
        backend: 'wav',
        inputWav: join(ROOT, 'fixtures/offline/unlock-request.wav'),
        outputWav: join(work, 'speaker.wav'),
      },
      phonesDir: join(work, 'phones'),
      store: { path: store },
      ...extra,
    }),
    'test config',
    { GEMINI_API_KEY: 'test-key' },
  )
}
