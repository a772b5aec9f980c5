import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/app/config/errors.js'
import { parseConfig } from '../../src/app/config/load.js'

const TOKEN = 'eyJhbGciOi-long-lived-ha-token'

function load(home: unknown, env: NodeJS.ProcessEnv = {}) {
  return parseConfig(JSON.stringify({ homeAssistant: home }), '/etc/nocturn/config.json', env)
}

function problems(home: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    load(home, env)
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems]
    throw err
  }
  return []
}

describe('homeAssistant in the configuration', () => {
  it('takes the token from the environment, with the documented defaults', () => {
    const { config } = load(
      { url: 'http://homeassistant.local:8123', area: 'Kitchen' },
      { NOCTURN_HA_TOKEN: TOKEN },
    )
    expect(config.homeAssistant).toMatchObject({
      url: 'http://homeassistant.local:8123',
      token: TOKEN,
      area: 'Kitchen',
      refreshMinutes: 10,
      confirmSeconds: 15,
      safeScripts: [],
    })
  })

  it('refuses a token written into the file, and never echoes it', () => {
    const p = problems({ url: 'http://ha:8123', token: TOKEN }, { NOCTURN_HA_TOKEN: TOKEN })
    expect(p.join('\n')).toMatch(
      /homeAssistant\.token.*keep the access token out of the config file/,
    )
    expect(p.join('\n')).not.toContain(TOKEN)
  })

  it('names what is missing or malformed, and the fix', () => {
    expect(problems({ url: 'http://ha:8123' })).toEqual([
      expect.stringMatching(/^homeAssistant: no access token — set NOCTURN_HA_TOKEN/),
    ])
    expect(problems({ url: 'ha.local' }, { NOCTURN_HA_TOKEN: TOKEN }).join('\n')).toMatch(
      /homeAssistant\.url.*e\.g\. "http:\/\/homeassistant\.local:8123"/,
    )
    const bad = problems(
      {
        url: 'http://ha:8123',
        critical: { deviceClasses: { garage: 'one-shot' } },
        safeScripts: ['movie'],
      },
      { NOCTURN_HA_TOKEN: TOKEN },
    ).join('\n')
    expect(bad).toMatch(/homeAssistant\.critical\.deviceClasses\.garage: .*e\.g\. "cover\.garage"/)
    expect(bad).toMatch(/homeAssistant\.safeScripts\[0\]: .*e\.g\. "script\.movie_night"/)
  })
})
