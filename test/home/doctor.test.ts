import { afterEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/app/config/load.js'
import { homeAssistantCheck } from '../../src/app/doctor/home-assistant-check.js'
import { FakeHomeAssistant } from '../../src/testing/fake-home-assistant/server.js'

const TOKEN = 'doctor-ha-token-not-for-output'
let ha: FakeHomeAssistant | undefined

afterEach(async () => {
  await ha?.stop()
  ha = undefined
})

async function check(home: Record<string, unknown>, token = TOKEN) {
  const loaded = parseConfig(JSON.stringify({ homeAssistant: home }), '/etc/nocturn/config.json', {
    NOCTURN_HA_TOKEN: token,
  })
  return homeAssistantCheck.run({ env: {}, loaded, configPath: undefined, configError: undefined })
}

describe('nocturn doctor: Home Assistant', () => {
  it('counts the tools and entities, lists what is critical under the policy and the scripts not marked safe', async () => {
    ha = await FakeHomeAssistant.start({ token: TOKEN })
    const r = await check({
      url: ha.url,
      area: 'Kitchen',
      safeScripts: ['script.movie_night'],
      critical: { entities: { 'lock.back_door': 'one-shot' } },
    })
    expect(r.status).toBe('ok')
    expect(r.summary).toMatch(/^\d+ tools, 14 exposed entities, 4 of them critical$/)
    expect(r.details).toEqual([
      "a phone's yes to unlock: Front Door — Hall (lock.front_door)",
      "a phone's yes to open: Garage Door — Garage (cover.garage_door)",
      "a phone's yes to open: Garden Water — Garden (valve.garden_water)",
      "a phone's yes to run: Open Up — Hall (script.open_up)",
      expect.stringMatching(/^scripts not marked safe .*: script\.open_up$/),
    ])
    expect(JSON.stringify(r)).not.toContain(TOKEN)
  })

  it('a wrong token, an HA that is not there, and an unknown area each say what to fix', async () => {
    ha = await FakeHomeAssistant.start({ token: TOKEN })
    expect((await check({ url: ha.url }, 'wrong')).summary).toMatch(
      /refused the token: make a new long-lived token/,
    )
    expect((await check({ url: ha.url, area: 'Attic' })).summary).toMatch(/no area "Attic"/)
    const url = ha.url
    await ha.stop()
    const down = await check({ url })
    expect(down).toMatchObject({
      status: 'fail',
      summary: expect.stringMatching(
        /^cannot reach http:\/\/127\.0\.0\.1:\d+: check homeAssistant\.url/,
      ),
    })
    expect(await check({ url }, 'x').then((r) => JSON.stringify(r))).not.toContain('x-token')
  })
})
