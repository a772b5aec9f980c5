import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/app/config/load.js'
import { loadToolModules } from '../../src/app/tool-modules.js'
import { silentLogger } from '../../src/core/logger.js'
import { ToolSet } from '../../src/core/tool-set.js'
import { RecordingPublisher } from '../../src/testing/recording-publisher.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { homeActionTool } from '../../src/tools/home-actions.js'
import { coreFixture } from '../helpers/core.js'

const CONFIG = JSON.stringify({
  homeActions: [
    {
      name: 'hall_light_on',
      description: 'Turns the hall light on.',
      topic: 'zigbee2mqtt/hall_light/set',
      payload: { state: 'ON' },
      qos: 0,
      policy: { voice: 'allow' },
    },
    {
      name: 'unlock_front_door',
      description: 'Unlocks the front door.',
      says: 'unlock the front door',
      topic: 'zigbee2mqtt/front_door/set',
      payload: { state: 'UNLOCK' },
      critical: true,
      policy: { voice: 'ask', text: 'ask' },
    },
  ],
})

function rig() {
  const loaded = parseConfig(CONFIG, 'c.json')
  const f = coreFixture({ policies: loaded.policies })
  const publisher = new RecordingPublisher()
  const tools = new ToolSet(loaded.config.homeActions.map((a) => homeActionTool(a, publisher)))
  return { f, publisher, tools }
}

describe('home actions from the configuration', () => {
  it('an allowed action publishes its configured payload with its qos and retain', async () => {
    const { f, publisher, tools } = rig()
    const out = await tools.call(f.ctx({ channel: 'voice' }), 'hall_light_on', {})
    expect(out).toEqual({
      ok: true,
      value: { sent: true, acknowledgedByBroker: true, action: 'turns the hall light on' },
    })
    expect(publisher.published).toEqual([
      // Configured QoS 0, sent at QoS 1: only an acknowledged publish can come back refused.
      {
        topic: 'zigbee2mqtt/hall_light/set',
        payload: '{"state":"ON"}',
        opts: { qos: 1, retain: false },
      },
    ])
  })

  it('a critical action asks a phone, in its own words, and publishes only on a yes', async () => {
    const { f, publisher, tools } = rig()
    const call = tools.call(f.ctx({ channel: 'text' }), 'unlock_front_door', {})
    await f.clock.advance(0)
    const asked = f.approver.last()
    expect(asked.request).toMatchObject({
      tool: 'unlock_front_door',
      action: 'unlock the front door',
      critical: true,
    })
    expect(publisher.published).toEqual([])
    asked.answer({ decision: 'approve', by: 'phone-anna' })
    expect(await call).toMatchObject({ ok: true })
    expect(publisher.published).toEqual([
      {
        topic: 'zigbee2mqtt/front_door/set',
        payload: '{"state":"UNLOCK"}',
        opts: { qos: 1, retain: false },
      },
    ])
  })

  it('a denial or a broker failure publishes nothing and tells the model why', async () => {
    const { f, publisher, tools } = rig()
    const call = tools.call(f.ctx({ channel: 'voice' }), 'unlock_front_door', {})
    await f.clock.advance(0)
    f.approver.last().answer({ decision: 'deny', by: 'phone-anna' })
    expect(await call).toMatchObject({ ok: false, code: 'NOC_ERR_DENIED_BY_HUMAN' })
    publisher.failWith = new Error('not connected')
    const failed = await tools.call(f.ctx({ channel: 'voice' }), 'hall_light_on', {})
    expect(failed).toMatchObject({
      ok: false,
      code: 'NOC_ERR_BROKER_UNREACHABLE',
      error: expect.stringContaining('The home broker did not take the command'),
    })
    expect(publisher.published).toEqual([])
  })

  it('arguments are refused: the model cannot pick the topic or payload', async () => {
    const { f, tools } = rig()
    const out = await tools.call(f.ctx({ channel: 'voice' }), 'hall_light_on', { topic: 'x/#' })
    expect(out).toMatchObject({ ok: false, code: 'NOC_ERR_INVALID_ARGS' })
  })
})

describe('tools from local modules', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-modules-'))
  const write = (name: string, body: string) => {
    const p = join(dir, name)
    writeFileSync(p, body)
    return p
  }
  const deps = { clock: new VirtualClock(), logger: silentLogger }

  it('loads a tool, a list, and a factory given the clock; the tools run behind the gate', async () => {
    const one = write(
      'one.mjs',
      `export default { name: 'say_hello', description: 'Greets.', parameters: { type: 'object' },
         policy: { voice: 'allow' }, async call() { return { hello: 'world' } } }`,
    )
    const factory = write(
      'factory.mjs',
      `export default async ({ clock }) => [{ name: 'uptime', description: 'Clock.', parameters: { type: 'object' },
         async call() { return { now: clock.now() } } }]`,
    )
    const tools = await loadToolModules([one, factory], deps)
    expect(tools.map((t) => t.name)).toEqual(['say_hello', 'uptime'])
    const f = coreFixture()
    const set = new ToolSet(tools)
    expect(await set.call(f.ctx(), 'say_hello', {})).toEqual({
      ok: true,
      value: { hello: 'world' },
    })
  })

  it('says clearly what is wrong, naming the config key and the file', async () => {
    const noDefault = write('nodefault.mjs', 'export const x = 1')
    const badName = write(
      'badname.mjs',
      `export default { name: 'has space', description: 'x', parameters: { type: 'object' }, call() {} }`,
    )
    const noCall = write(
      'nocall.mjs',
      `export default { name: 'ok', description: 'x', parameters: { type: 'object' } }`,
    )
    const badPolicy = write(
      'badpolicy.mjs',
      `export default { name: 'p', description: 'x', parameters: { type: 'object' }, policy: { voice: 'always' }, call() {} }`,
    )
    const dup = write(
      'dup.mjs',
      `export default { name: 'p', description: 'x', parameters: { type: 'object' }, call() {} }`,
    )
    const syntax = write('syntax.mjs', 'export default {')
    await expect(loadToolModules([join(dir, 'missing.mjs')], deps)).rejects.toThrow(
      /^tools.modules\[0\]: cannot load .*missing.mjs \(file not found\)$/,
    )
    await expect(loadToolModules(['relative.mjs'], deps)).rejects.toThrow(
      'tools.modules[0]: relative.mjs must be an absolute path',
    )
    await expect(loadToolModules([noDefault], deps)).rejects.toThrow(/has no default export/)
    await expect(loadToolModules([badName], deps)).rejects.toThrow(
      /name must be letters, digits and _/,
    )
    await expect(loadToolModules([noCall], deps)).rejects.toThrow(
      /ok: call\(ctx, args\) must be a function/,
    )
    await expect(loadToolModules([badPolicy], deps)).rejects.toThrow(
      /p: policy.voice must be allow, ask or deny/,
    )
    const pOk = write(
      'pok.mjs',
      `export default { name: 'p', description: 'x', parameters: { type: 'object' }, call() {} }`,
    )
    await expect(loadToolModules([pOk, dup], deps)).rejects.toThrow(
      /tools.modules\[1\]: .*dup.mjs: the name "p" is already used by/,
    )
    await expect(loadToolModules([syntax], deps)).rejects.toThrow(
      /^tools.modules\[0\]: cannot load .*syntax.mjs/,
    )
  })
})
