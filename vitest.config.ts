import { defineConfig } from 'vitest/config'
import { systemSkipsConfig } from './test/helpers/system-skips.js'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start real processes (brokers, ALSA tools); two cores are all CI has.
    maxWorkers: 2,
    // Generous: a bound for a hang, not a speed requirement (a slow board or a busy CI must pass).
    testTimeout: 60_000,
    // A fresh checkout's dist/, built before the workers start (the bundle and installer tests).
    globalSetup: ['test/helpers/build-once.ts'],
    ...systemSkipsConfig(),
  },
})
