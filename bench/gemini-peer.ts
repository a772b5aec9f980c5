// The far side for gemini-adapter.bench.ts, in its own process so its CPU is not counted: a fake
// live server that, once the client's first audio frame arrives, either speaks SECONDS of 24 kHz
// audio as fast as the socket takes it, or waits for SECONDS of 16 kHz input; then turnComplete.
import { FakeLiveServer, phrase } from '../src/testing/fake-live-server/index.js'

const seconds = Number(process.argv[2] ?? 60)
const chunkMs = Number(process.argv[3] ?? 40)
const hello = phrase('hello').pcm
const pcm = Buffer.alloc(seconds * 48_000)
for (let o = 0; o < pcm.length; o += hello.length) hello.copy(pcm, o)
const inputFrames = (seconds * 1000) / 20

const server = await FakeLiveServer.start({
  scripts: (n) =>
    n === 0
      ? {
          steps: [
            { waitFor: 'realtimeInput' },
            { speak: pcm, chunkMs, transcript: false },
            { send: { serverContent: { turnComplete: true } } },
          ],
        }
      : {
          steps: [
            {
              waitFor: (f) =>
                f.key === 'realtimeInput' &&
                server.framesOf('realtimeInput', n).length >= inputFrames,
              timeoutMs: 120_000,
            },
            { send: { serverContent: { turnComplete: true } } },
          ],
        },
})
process.stdout.write(`${server.baseUrl}\n`)
process.stdin.resume()
process.stdin.on('end', () => void server.close().then(() => process.exit(0)))
