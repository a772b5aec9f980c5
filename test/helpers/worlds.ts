import { afterAll, afterEach, beforeAll } from 'vitest'
import { freePort, type TestBroker } from './brokers.js'

/**
 * One broker for a describe block and a fresh world per test, for worlds built on a broker (a
 * device, its phones…): the broker starts before the block and stops after it; the world a test
 * opens is closed when the test ends, or earlier by `closeWorld()`.
 */
export function brokerWithWorlds<W extends { close(): Promise<unknown> }, A extends unknown[]>(
  make: (port: number) => TestBroker,
  build: (broker: TestBroker, ...args: A) => Promise<W>,
): { broker(): TestBroker; open(...args: A): Promise<W>; closeWorld(): Promise<void> } {
  let broker: TestBroker | undefined
  let current: W | undefined
  beforeAll(async () => {
    broker = make(await freePort())
    await broker.start()
  })
  afterAll(async () => {
    await broker?.stop()
  })
  const closeWorld = async () => {
    await current?.close()
    current = undefined
  }
  afterEach(closeWorld)
  const started = () => {
    if (!broker)
      throw new Error('the broker is not started (brokerWithWorlds runs inside a describe)')
    return broker
  }
  return {
    broker: started,
    open: async (...args: A) => {
      current = await build(started(), ...args)
      return current
    },
    closeWorld,
  }
}
