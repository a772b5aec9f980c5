import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { wavHeader } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { fakeGpiod } from '../helpers/fake-gpiod.js'
import { type NocturnProcess, startNocturnRun, writeRunConfig } from '../helpers/nocturn-process.js'
import { EMBEDDING, MEL, MODEL_DIR } from '../helpers/wake.js'

const HEAD = 'hey_jarvis_v0.1.onnx'

/**
 * Issue 47: the wake models load on the runtime's thread beside the rest of the start, not after
 * it, and never before the button. A real `nocturn run` in wake mode (the gpiod panel on libgpiod 2
 * command lines) whose head model is a FIFO: the runtime's thread waits in its read until the test
 * writes the model, so "still loading" is a state the test holds, not a race. Meanwhile the rest
 * of the start is composed and the button mutes; the detector listens once the model comes.
 */
describe('the wake models load beside the start', () => {
  const closers: (() => Promise<unknown> | unknown)[] = []
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await Promise.resolve(c()).catch(() => {})
  })

  it('the load begins before the rest is composed; the button mutes while it waits; then it listens', async () => {
    const work = mkdtempSync(join(tmpdir(), 'nocturn-wake-early-'))
    const models = join(work, 'models')
    mkdirSync(models)
    copyFileSync(MEL, join(models, 'melspectrogram.onnx'))
    copyFileSync(EMBEDDING, join(models, 'embedding_model.onnx'))
    execFileSync('mkfifo', [join(models, HEAD)])
    const silence = new Uint8Array(16_000 * 2 * 30)
    writeFileSync(
      join(work, 'silence.wav'),
      Buffer.concat([wavHeader(16_000, silence.length), silence]),
    )
    const gpiod = fakeGpiod(2)
    closers.push(() => gpiod.cleanup())
    gpiod.scriptMonitor([
      [
        { ms: 0, whenFile: 'mute', edge: 'falling' },
        { ms: 100, edge: 'rising' },
      ],
    ])
    const server = await FakeLiveServer.start({ scripts: [], logger: silentLogger })
    closers.push(() => server.close())
    const config = writeRunConfig(
      work,
      { baseUrl: server.baseUrl, inputWav: join(work, 'silence.wav'), brokerUrl: '' },
      {
        mqtt: undefined,
        panel: { backend: 'gpiod', button: 'GPIO17' },
        listen: {
          wake: { models: [{ model: 'hey_jarvis' }], modelDir: models, runtime: 'native' },
        },
      },
    )
    const nocturn: NocturnProcess = startNocturnRun(config, {
      apiKey: 'wake-early-key',
      env: gpiod.env,
    })
    closers.push(() => nocturn.stop('SIGKILL'))
    const at = (msg: string) => nocturn.lines.findIndex((l) => l.msg === msg)

    await nocturn.waitForLine('the voice driver', (l) => l.msg === 'voice driver ready', 60_000)
    await nocturn.waitForLine('the panel', (l) => l.msg === 'panel started', 60_000)
    // Begun before the voice, the providers and the tools were composed, and not before the panel
    // was made; the head model has not come, so nothing listens yet.
    expect(at('wake models loading')).toBeGreaterThanOrEqual(0)
    expect(at('wake models loading')).toBeLessThan(at('voice driver ready'))
    // Its thread asked for every model before anything after the panel was composed (the household
    // is the first): asked at the next turn of the loop, the load began ~20 ms later.
    expect(at('wake models loading')).toBeLessThan(
      at('no mqtt configured: approvals are asked on the terminal, or denied'),
    )
    expect(at('listening for the wake phrase')).toBe(-1)

    gpiod.release('mute')
    await nocturn.waitForLine('muted', (l) => l.msg === 'muted', 30_000)
    expect(at('listening for the wake phrase')).toBe(-1)

    // The model arrives: the load goes on where it waited, and the speaker listens.
    await writeFile(join(models, HEAD), readFileSync(join(MODEL_DIR, HEAD)))
    await nocturn.waitForLine('listening', (l) => l.msg === 'listening for the wake phrase', 60_000)
    await nocturn.waitForLine('running', (l) => l.event === 'nocturn_running', 30_000)
    expect(at('muted')).toBeLessThan(at('listening for the wake phrase'))
  }, 120_000)
})
