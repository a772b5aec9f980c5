import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createLogger } from '../../src/app/logger.js'

describe('log lines', () => {
  it('carry each binding once: the innermost component wins, secrets stay redacted', async () => {
    let out = ''
    const destination = new Writable({
      write(chunk, _enc, cb) {
        out += chunk.toString()
        cb()
      },
    })
    createLogger({ destination, level: 'info' })
      .child({ component: 'mqtt' })
      .child({ component: 'mqtt-approver', device: 'kitchen' })
      .warn({ password: 'hunter2', reason: 'bad-mac' }, 'decision rejected')
    await new Promise((r) => setImmediate(r))
    const line = out.trim()
    expect(line.match(/"component"/g)).toHaveLength(1)
    expect(JSON.parse(line)).toMatchObject({
      component: 'mqtt-approver',
      device: 'kitchen',
      reason: 'bad-mac',
      password: '[redacted]',
    })
    expect(line).not.toContain('hunter2')
  })
})
