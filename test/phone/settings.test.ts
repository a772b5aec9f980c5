import { describe, expect, it } from 'vitest'
import { DeviceRefusal } from '../../src/phone/conversations.js'
import { mosquittoBroker } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { brokerWithWorlds } from '../helpers/worlds.js'
import { type PhoneWorld, phoneWorld } from './world.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')

/**
 * The speaker's settings from a phone (docs/protocol.md, "Speaker settings") with the terminal
 * phone on a real Mosquitto: the wake sensitivity is in the status and settable only where there
 * is a wake word; a word other than the three is refused and changes nothing.
 */
describe.skipIf(skip !== undefined)(
  'speaker settings from a phone (Mosquitto)',
  { timeout: 60_000 },
  () => {
    const worlds = brokerWithWorlds(mosquittoBroker, (broker, wakeWord: boolean) =>
      phoneWorld(broker, { wakeWord }),
    )

    /** The retained status, as a phone reads it. */
    async function status(w: PhoneWorld): Promise<() => Record<string, unknown> | undefined> {
      const c = await w.raw()
      let last: Record<string, unknown> | undefined
      c.on('message', (_t, payload) => {
        last = JSON.parse(payload.toString('utf8')) as Record<string, unknown>
      })
      await c.subscribeAsync(`${w.topics.base}/status`, { qos: 1 })
      return () => last
    }

    it('with a wake word: the status carries the sensitivity, a phone sets it, and an unknown word is refused', async () => {
      const w = await worlds.open(true)
      const seen = await status(w)
      await until(() => seen()?.sensitivity === 'normal', 'the sensitivity in the status')
      const anna = await w.phone('anna')
      const set = await anna.request('set_sensitivity', { sensitivity: 'high' })
      expect(set.done).toEqual({ sensitivity: 'high' })
      expect(w.deviceState.sensitivity).toBe('high')
      await until(() => seen()?.sensitivity === 'high', 'the new sensitivity in the status')
      const odd = anna.request('set_sensitivity', { sensitivity: 'HIGH!' })
      await expect(odd).rejects.toBeInstanceOf(DeviceRefusal)
      await expect(odd).rejects.toThrow('expected one of low, normal, high')
      expect(w.deviceState.sensitivity).toBe('high')
    })

    it('without a wake word: no sensitivity in the status, and setting one is refused with why', async () => {
      const w = await worlds.open(false)
      const seen = await status(w)
      await until(() => seen()?.online === true, 'the status')
      expect(seen()).not.toHaveProperty('sensitivity')
      expect(seen()).toHaveProperty('volume')
      const anna = await w.phone('anna')
      const refused = anna.request('set_sensitivity', { sensitivity: 'low' })
      await expect(refused).rejects.toThrow('listens without a wake word')
      expect(w.deviceState.sensitivity).toBe('normal')
    })
  },
)
