// Home Assistant's tools (issue 41), against the stand-in HA on loopback through the real adapter
// (the MCP client package, the WebSocket API): (1) listing and preparing the tools — the tool
// list, the entity copy, a ToolSet — for 50 and 500 exposed entities: the time and the heap it
// keeps; resolving one call's name among them; (2) what the gate adds to a one-shot call (a
// light) over calling HA's tool directly; (3) whether the event loop — where the audio path runs
// — is held up while 20 calls wait on an HA that answers after a second.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { realClock } from '../src/adapters/clock/real-clock.js'
import { openHome } from '../src/app/compose/open-home.js'
import { silentLogger } from '../src/core/logger.js'
import { ToolSet } from '../src/core/tool-set.js'
import { DEFAULT_CRITICAL_POLICY } from '../src/home/criticality.js'
import { HomeTools } from '../src/home/home-tools.js'
import { largeHouse } from '../src/testing/fake-home-assistant/house.js'
import { FakeHomeAssistant } from '../src/testing/fake-home-assistant/server.js'
import { coreFixture } from '../test/helpers/core.js'
import { machineLine, quantile } from './machine.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const TOKEN = 'bench-token'
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6
const median = (xs: number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  )
const p99 = (xs: number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.99,
  )

async function world(n: number) {
  const ha = await FakeHomeAssistant.start({ token: TOKEN, house: largeHouse(n) })
  const home = openHome(ha.url, () => TOKEN, 20_000)
  return { ha, home }
}

function homeTools(home: ReturnType<typeof openHome>, tools: ToolSet) {
  return new HomeTools({
    home,
    tools,
    policy: DEFAULT_CRITICAL_POLICY,
    area: 'Kitchen',
    clock: realClock(),
    logger: silentLogger,
    refreshMs: 3_600_000,
    retryMs: 3_600_000,
    confirmMs: 5000,
  })
}

process.stdout.write(`${machineLine()}\n\n`)
process.stdout.write(
  '| exposed entities | list + copy + ToolSet, median (ms) | p99 (ms) | heap kept (KiB) | resolve one name, median (µs) |\n|---|---|---|---|---|\n',
)
for (const n of [50, 500]) {
  const { ha, home } = await world(n)
  const times: number[] = []
  for (let i = 0; i < 30; i++) {
    const t0 = process.hrtime.bigint()
    await homeTools(home, new ToolSet()).refresh()
    times.push(ms(t0))
  }
  gc()
  const before = process.memoryUsage().heapUsed
  const tools = new ToolSet()
  const kept = homeTools(home, tools)
  await kept.refresh()
  gc()
  const heapKiB = (process.memoryUsage().heapUsed - before) / 1024
  const turnOn = tools.get('intent__HassTurnOn')
  const prep: number[] = []
  for (let i = 0; i < 2000; i++) {
    const t0 = process.hrtime.bigint()
    turnOn?.prepare?.({ name: `Light ${(i % 40) + 1}` })
    prep.push(ms(t0) * 1000)
  }
  process.stdout.write(
    `| ${ha.house.exposed().length} | ${median(times).toFixed(1)} | ${p99(times).toFixed(1)} | ${heapKiB.toFixed(0)} | ${median(prep).toFixed(0)} |\n`,
  )
  await home.close()
  await ha.stop()
}

// (2) The gate's share of a one-shot call through HA's own tool (a brightness), and the whole of
// a one-shot switch (exact service call over the WebSocket, then its state confirmed).
{
  const { ha, home } = await world(50)
  const tools = new ToolSet()
  await homeTools(home, tools).refresh()
  const core = coreFixture()
  const direct: number[] = []
  const gated: number[] = []
  const exact: number[] = []
  for (let i = 0; i < 400; i++) {
    const args = { name: 'Kitchen Light', brightness: 10 + (i % 80) }
    let t0 = process.hrtime.bigint()
    await home.callTool('light__HassLightSet', args)
    direct.push(ms(t0))
    t0 = process.hrtime.bigint()
    const r = await tools.call(core.ctx(), 'light__HassLightSet', args)
    gated.push(ms(t0))
    if (!r.ok) throw new Error(`the gated call failed: ${r.error}`)
    t0 = process.hrtime.bigint()
    const e = await tools.call(core.ctx(), i % 2 ? 'intent__HassTurnOn' : 'intent__HassTurnOff', {
      name: 'Kitchen Light',
    })
    exact.push(ms(t0))
    if (!e.ok) throw new Error(`the switch failed: ${e.error}`)
  }
  process.stdout.write(
    `\nA one-shot call through HA's tool (a brightness), 400 each: directly ${median(direct).toFixed(2)} ms median (p99 ${p99(direct).toFixed(2)}); through the ToolSet and gate ${median(gated).toFixed(2)} ms (p99 ${p99(gated).toFixed(2)}); added ${(median(gated) - median(direct)).toFixed(2)} ms. A one-shot switch, exact and confirmed: ${median(exact).toFixed(2)} ms median (p99 ${p99(exact).toFixed(2)}).\n`,
  )
  await home.close()
  await ha.stop()
}

// (3) The event loop while HA is slow: 20 calls held a second each, against the same time idle.
{
  const { ha, home } = await world(50)
  const tools = new ToolSet()
  await homeTools(home, tools).refresh()
  const core = coreFixture()
  const lag = async (during: () => Promise<unknown>) => {
    const h = monitorEventLoopDelay({ resolution: 5 })
    h.enable()
    await during()
    h.disable()
    return { p99: h.percentile(99) / 1e6, max: h.max / 1e6 }
  }
  const idle = await lag(() => new Promise((r) => setTimeout(r, 1500)))
  ha.slow(1000)
  const slow = await lag(() =>
    Promise.all(
      // Each call its own context, as the voice driver gives it.
      Array.from({ length: 20 }, (_, i) =>
        tools.call(core.ctx(), 'light__HassLightSet', {
          name: 'Kitchen Light',
          brightness: 10 + i,
        }),
      ),
    ),
  )
  process.stdout.write(
    `\nEvent-loop delay (the audio path's thread), 5 ms resolution: idle p99 ${idle.p99.toFixed(1)} ms, max ${idle.max.toFixed(1)} ms; with 20 calls waiting on a slow HA (1 s each) p99 ${slow.p99.toFixed(1)} ms, max ${slow.max.toFixed(1)} ms.\n`,
  )
  await home.close()
  await ha.stop()
}
process.exit(0)
