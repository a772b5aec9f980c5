// CPU of the OpenAI adapter's microphone path per second of audio, beside the same path without
// the resampler: the Realtime API takes 24 kHz only, so each 20 ms frame of the 16 kHz microphone
// is upsampled (src/adapters/openai/resampler.ts), then base64'd into an `input_audio_buffer.append`
// event as the SDK sends it. Measured in this process, no socket (ws masking grows with the bytes,
// 1.5× at 24 kHz; its share is in gemini-adapter.bench.ts). Target: the resampler ≤ 0.1 % of a core.
import { Upsampler16to24 } from '../src/adapters/openai/resampler.js'
import { machineLine } from './machine.js'

const SECONDS = 600
const FRAMES = SECONDS * 50
const frame = new Uint8Array(640)
for (let i = 0; i < 320; i++) {
  const v = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16_000))
  frame[2 * i] = v & 0xff
  frame[2 * i + 1] = (v >> 8) & 0xff
}

function measure(name: string, fn: () => void): void {
  for (let i = 0; i < 2000; i++) fn() // warm up
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < FRAMES; i++) fn()
  const cpu = process.cpuUsage(cpu0)
  const ms = (cpu.user + cpu.system) / 1000
  process.stdout.write(
    `| ${name} | ${SECONDS} | ${ms.toFixed(0)} | ${((ms / SECONDS / 1000) * 100).toFixed(4)} |\n`,
  )
}

let sink = 0
const up = new Upsampler16to24()
const event = (pcm: Uint8Array) =>
  JSON.stringify({
    type: 'input_audio_buffer.append',
    audio: Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64'),
  })

process.stdout.write(`${machineLine()}\n\n`)
process.stdout.write(
  '| case | audio s | cpu ms | % of one core per audio second |\n|---|---|---|---|\n',
)
measure('resample 16 → 24 kHz only', () => {
  sink += up.push(frame).byteLength
})
measure('16 kHz frame → event (today: no resampler)', () => {
  sink += event(frame).length
})
measure('16 kHz → 24 kHz → event (the OpenAI path)', () => {
  sink += event(up.push(frame)).length
})
if (sink === 0) process.stdout.write('nothing measured\n')
