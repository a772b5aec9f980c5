import { afterEach, describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer, serverFrame } from '../../src/testing/fake-live-server/index.js'
import { wakeMarkFrame } from '../../src/testing/fake-wake-word.js'
import { until } from '../helpers/wait.js'
import { FRAME_BYTES, speech16k, wakeWorld } from './wake-world.js'

const TAG = Buffer.from('CMD#', 'latin1')

/** Speech with each 20 ms frame's first bytes replaced by "CMD#" and its index. */
function stamped(pcm: Uint8Array): Uint8Array {
  const out = Buffer.from(pcm)
  for (let i = 0, o = 0; o + FRAME_BYTES <= out.length; i++, o += FRAME_BYTES) {
    TAG.copy(out, o)
    out.writeUInt16LE(i, o + TAG.length)
  }
  return out
}

/** The indices of the stamped frames found in `heard`, in the order they arrived. */
function stampsIn(heard: Buffer): number[] {
  const found: number[] = []
  for (let at = heard.indexOf(TAG); at >= 0; at = heard.indexOf(TAG, at + 1)) {
    found.push(heard.readUInt16LE(at + TAG.length))
  }
  return found
}

/**
 * Issue 22 item 5: "Hey Jarvis, what time is it" without a pause. The detector fires 400 ms after
 * the phrase ends (the reference's p90), by when the command has begun, and the first connection
 * takes 2.5 s to be ready. Every frame of the command, and the whole wake phrase before it (the
 * second opinion needs to hear it), reaches the fake Live service through the real SDK, in order.
 */
describe('one breath', () => {
  const closers: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c()
  })

  it('sends the whole wake phrase and every frame of the command, in order', async () => {
    const server = await FakeLiveServer.start({
      logger: silentLogger,
      // A slow first connection: setup is answered 2.5 s after it was sent.
      scripts: [
        {
          handshake: 'ignore',
          steps: [{ waitFor: 'setup' }, { delayMs: 2500 }, { send: serverFrame.setupComplete() }],
        },
      ],
    })
    closers.push(() => server.close())
    const w = await wakeWorld(server, { confirm: false, detectorLatencyMs: 400 })
    closers.push(() => w.close())
    const phrase = speech16k('speech-en-us-m.wav', 1000, 900)
    const command = stamped(speech16k('speech-en-gb-f.wav', 1000, 2000))
    const frames = command.byteLength / FRAME_BYTES
    await w.say(phrase)
    w.frame(wakeMarkFrame())
    await w.say(command)
    await until(
      () => stampsIn(server.connections[0]?.heardAudio() ?? Buffer.alloc(0)).length >= frames,
      'stampsIn(server.connections[0]?.heardAudio() ?? Buffer.alloc(0)).le...',
      60_000,
    )
    const heard = server.connections[0]?.heardAudio() as Buffer
    expect(stampsIn(heard)).toEqual(Array.from({ length: frames }, (_, i) => i))
    // The whole phrase came first, then the detector's frame, then the command.
    const phraseAt = heard.indexOf(Buffer.from(phrase))
    expect(phraseAt).toBeGreaterThanOrEqual(0)
    expect(heard.indexOf(Buffer.from(wakeMarkFrame()))).toBe(phraseAt + phrase.byteLength)
    expect(w.log.records.filter((r) => /dropped in a gap/.test(r.msg))).toEqual([])
  }, 30_000)
})
