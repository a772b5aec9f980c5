import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start real processes (brokers, ALSA tools); two cores are all CI has.
    maxWorkers: 2,
    testTimeout: 20_000,
  },
})
