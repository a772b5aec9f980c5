// The time from a refused provider to the next one answering (issue 42, failover): the real
// adapters (`@google/genai`, `openai`) against the fakes on loopback, behind the failover. Per
// attempt: from the moment the failover learns the first provider refused (the listener's `failed`)
// to the next one's session being open (`reached`), beside the same provider opened directly.
// The fakes refuse at once; a real service adds its own round trips to both columns.
import { realClock } from '../src/adapters/clock/real-clock.js'
import { GeminiLive } from '../src/adapters/gemini/gemini-live.js'
import { OpenAIRealtime } from '../src/adapters/openai/openai-realtime.js'
import { silentLogger } from '../src/core/logger.js'
import { defaultPersona } from '../src/core/persona.js'
import type { LiveLLM } from '../src/ports/live-llm.js'
import { FakeLiveServer } from '../src/testing/fake-live-server/index.js'
import { FakeRealtimeServer } from '../src/testing/fake-realtime-server/index.js'
import { FailoverLive } from '../src/voice/failover-live.js'
import { ProviderOrder } from '../src/voice/provider-order.js'
import { recorder } from '../test/gemini/helpers.js'
import { machineLine, quantile } from './machine.js'

const ROUNDS = 100
const KEY = 'bench-key'
const clock = realClock()
const nop = () => {}
const setup = { persona: defaultPersona, tools: [], nonBlockingTools: true }

const gemini = (baseUrl: string) =>
  new GeminiLive({ apiKey: KEY, model: 'gemini-3.8-live', baseUrl, logger: silentLogger, clock })
const openai = (baseUrl: string) =>
  new OpenAIRealtime({
    apiKey: KEY,
    model: 'gpt-realtime',
    voice: 'marin',
    transcriptionModel: 'gpt-4o-mini-transcribe',
    baseUrl,
    logger: silentLogger,
    clock,
  })

/** Opens and closes `ROUNDS` sessions; each round's ms from the refusal (or the start) to open. */
async function rounds(
  providers: readonly [string, LiveLLM][],
): Promise<{ afterRefusal: number[]; whole: number[] }> {
  const afterRefusal: number[] = []
  const whole: number[] = []
  for (let i = 0; i < ROUNDS + 5; i++) {
    let refusedAt: number | undefined
    // A fresh order each round: the refused provider must be tried, not resting.
    const order = new ProviderOrder({
      names: providers.map(([n]) => n),
      clock,
      log: silentLogger,
      listener: {
        failed: () => {
          refusedAt = performance.now()
        },
        reached: nop,
        unreachable: nop,
      },
    })
    const live = new FailoverLive(
      providers.map(([, l]) => l),
      order,
    )
    const t0 = performance.now()
    const session = await live.open(setup, recorder())
    const t1 = performance.now()
    await session.close()
    if (i < 5) continue // warm-up: the SDKs' first imports and sockets
    whole.push(t1 - t0)
    if (refusedAt !== undefined) afterRefusal.push(t1 - refusedAt)
  }
  return { afterRefusal, whole }
}

function row(name: string, ms: readonly number[]): string {
  const s = [...ms].sort((a, b) => a - b)
  const f = (v: number) => v.toFixed(1)
  return `| ${name} | ${s.length} | ${f(quantile(s, 0.5))} | ${f(quantile(s, 0.99))} | ${f(s[0] ?? Number.NaN)}–${f(s.at(-1) ?? Number.NaN)} |`
}

const refusingGemini = await FakeLiveServer.start({ refuse: 'key' })
const goodGemini = await FakeLiveServer.start()
const refusingOpenai = await FakeRealtimeServer.start({ refuse: 429 })
const goodOpenai = await FakeRealtimeServer.start()

const geminiThenOpenai = await rounds([
  ['gemini', gemini(refusingGemini.baseUrl)],
  ['openai', openai(goodOpenai.baseUrl)],
])
const openaiThenGemini = await rounds([
  ['openai', openai(refusingOpenai.baseUrl)],
  ['gemini', gemini(goodGemini.baseUrl)],
])
const openaiAlone = await rounds([['openai', openai(goodOpenai.baseUrl)]])
const geminiAlone = await rounds([['gemini', gemini(goodGemini.baseUrl)]])

process.stdout.write(`${machineLine()}\n\n`)
process.stdout.write('| case | rounds | median ms | p99 ms | min–max ms |\n|---|---|---|---|---|\n')
const lines = [
  row('Gemini refuses the key → OpenAI open (from the refusal)', geminiThenOpenai.afterRefusal),
  row('  the same, whole open (Gemini tried first)', geminiThenOpenai.whole),
  row('OpenAI alone, open', openaiAlone.whole),
  row('OpenAI refuses 429 → Gemini open (from the refusal)', openaiThenGemini.afterRefusal),
  row('  the same, whole open (OpenAI tried first)', openaiThenGemini.whole),
  row('Gemini alone, open', geminiAlone.whole),
]
process.stdout.write(`${lines.join('\n')}\n`)
await Promise.all([
  refusingGemini.close(),
  goodGemini.close(),
  refusingOpenai.close(),
  goodOpenai.close(),
])
