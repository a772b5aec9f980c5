import { expect, it } from 'vitest'
import { MicRouter } from '../../src/audio/mic-router.js'
import type { AudioInSink } from '../../src/ports/audio.js'

it('routes one running microphone to the detector between sessions and to the session during one', async () => {
  let sink: AudioInSink | undefined
  let starts = 0
  let muted = false
  const device = {
    sampleRateHz: 16_000,
    start: async (s: AudioInSink) => {
      starts++
      sink = s
    },
    stop: async () => {
      sink = undefined
    },
    setMuted: (m: boolean) => {
      muted = m
    },
  }
  const router = new MicRouter(device)
  const idle: number[] = []
  const session: number[] = []
  const frame = (n: number) => sink?.frame(new Uint8Array([n]), n)
  await router.start({ frame: (p) => idle.push(p[0]!), error: () => {} })
  frame(1)
  const mic = router.sessionMic()
  await mic.start({ frame: (p) => session.push(p[0]!), error: () => {} })
  frame(2)
  frame(3)
  mic.setMuted(true)
  await mic.stop()
  frame(4)
  expect(idle).toEqual([1, 4])
  expect(session).toEqual([2, 3])
  expect(starts).toBe(1) // the device was never restarted
  expect(muted).toBe(true)
  await router.stop()
  expect(sink).toBeUndefined()
})

it("reads idle in the idle listener's pace, each frame as it comes during a session, and the pace again after it", async () => {
  const asked: [number, number | undefined][] = []
  const reads = {
    every: (ms: number, nextMs?: number) => asked.push([ms, nextMs]),
    align: () => {},
  }
  const device = {
    sampleRateHz: 16_000,
    start: async () => {},
    stop: async () => {},
    setMuted: () => {},
  }
  const router = new MicRouter(device, { reads })
  router.paceIdle(320, 200) // before the start: kept for it
  await router.start({ frame: () => {}, error: () => {} })
  expect(asked).toEqual([[320, undefined]])
  router.paceIdle(80, 60)
  expect(asked.at(-1)).toEqual([80, 60])
  router.paceIdle(20) // never shorter than the router's own idle bursts
  expect(asked.at(-1)).toEqual([80, undefined])
  const mic = router.sessionMic()
  await mic.start({ frame: () => {}, error: () => {} })
  expect(asked.at(-1)).toEqual([0, undefined])
  router.paceIdle(320, 100) // during the session: held for its end
  expect(asked.at(-1)).toEqual([0, undefined])
  await mic.stop()
  expect(asked.at(-1)).toEqual([320, undefined])
})
