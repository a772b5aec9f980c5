import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { ConsoleApprover } from '../../src/adapters/console/console-approver.js'
import type { ApprovalRequest } from '../../src/ports/approver.js'

const request = (action: string): ApprovalRequest => ({
  id: 'a1',
  tool: 'unlock_door',
  action,
  args: { door: 'front' },
  argsDigest: '0'.repeat(64),
  channel: 'voice',
  conversationId: 'c',
  critical: true,
  createdAt: 0,
  expiresAt: 60_000,
})

function terminal() {
  const input = new PassThrough()
  const output = new PassThrough()
  let shown = ''
  output.on('data', (c: Buffer) => {
    shown += c.toString()
  })
  const approver = new ConsoleApprover({ input, output, interactive: true, autoAnswer: 'deny' })
  return { input, approver, shown: () => shown }
}

describe('ConsoleApprover', () => {
  for (const [typed, expected] of [
    ['y', { decision: 'approve', grant: 'once', by: 'console' }],
    ['session', { decision: 'approve', grant: 'session', by: 'console' }],
    ['n', { decision: 'deny', by: 'console' }],
    ['whatever', { decision: 'deny', by: 'console' }],
  ] as const) {
    it(`typing "${typed}" answers ${expected.decision}`, async () => {
      const t = terminal()
      const p = t.approver.request(request('unlock the front door'), new AbortController().signal)
      await new Promise((r) => setImmediate(r))
      expect(t.shown()).toContain('approval needed (voice): unlock the front door')
      t.input.write(`${typed}\n`)
      expect(await p).toEqual(expected)
    })
  }

  it('asks one request at a time, in order', async () => {
    const t = terminal()
    const first = t.approver.request(request('open the garage'), new AbortController().signal)
    const second = t.approver.request(request('unlock the back door'), new AbortController().signal)
    await new Promise((r) => setImmediate(r))
    expect(t.shown()).not.toContain('back door')
    t.input.write('y\n')
    expect((await first).decision).toBe('approve')
    await new Promise((r) => setImmediate(r))
    expect(t.shown()).toContain('unlock the back door')
    t.input.write('n\n')
    expect((await second).decision).toBe('deny')
  })

  it('a withdrawn request stops asking and says so', async () => {
    const t = terminal()
    const ac = new AbortController()
    const p = t.approver.request(request('unlock the front door'), ac.signal)
    await new Promise((r) => setImmediate(r))
    ac.abort()
    await expect(p).rejects.toThrow()
    expect(t.shown()).toContain('(withdrawn)')
  })

  it('without a terminal it answers by itself and says so', async () => {
    const output = new PassThrough()
    const approver = new ConsoleApprover({
      input: new PassThrough(),
      output,
      interactive: false,
      autoAnswer: 'deny',
    })
    const d = await approver.request(request('unlock the front door'), new AbortController().signal)
    expect(d).toEqual({ decision: 'deny', by: 'console' })
    expect(String(output.read())).toContain('denied automatically (stdin is not a terminal)')
  })
})
