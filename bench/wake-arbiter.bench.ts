// Wake arbitration through a real Mosquitto on loopback: two speakers (kitchen and hall, each with
// its own connection, in this one process) claim the same wake round after round, and each claim's
// time from `claim()` to its decision is taken with the monotonic clock. The window is the
// appliance's default; only the settle time after a round is shortened so rounds follow quickly
// (it does not enter any decision's time). Three cases per round, in turn:
//   together      both claim in the same turn of the event loop; the loser learns from the broker
//   better first  the winner claims 20 ms before the loser, which yields the moment it claims
//   worse first   the loser claims 20 ms before the winner and yields when the better claim arrives
// Beside them, the floor: a plain setTimeout of one window started with the winner's claim, on the
// same event loop — how late this machine runs a timer, which no arbiter can beat.
// Target: every decision within the window (≤ 200 ms), and a loser told well before it.
import { loadavg } from 'node:os'
import { DEFAULT_WAKE_WINDOW_MS } from '../src/core/defaults.js'
import { freePort, mosquittoBroker } from '../test/helpers/brokers.js'
import { missingCommands } from '../test/helpers/system.js'
import { heard, wakeSpeaker } from '../test/helpers/wake-speakers.js'
import { machineLine, quantile } from './machine.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300)
const WARMUP = 10
const SETTLE_MS = 30
const STAGGER_MS = 20

const skip = missingCommands('mosquitto', 'mosquitto_passwd')
if (skip) process.exit(0)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const broker = mosquittoBroker(await freePort())
await broker.start()
const kitchen = await wakeSpeaker(broker.url, 'kitchen', { settleMs: SETTLE_MS })
const hall = await wakeSpeaker(broker.url, 'hall', { settleMs: SETTLE_MS })

type Case = 'together' | 'better first' | 'worse first'
const cases: Case[] = ['together', 'better first', 'worse first']
const times = {
  winner: [] as number[],
  'loser, together': [] as number[],
  'loser, better first': [] as number[],
  'loser, worse first': [] as number[],
  'floor: setTimeout(window)': [] as number[],
}
/** Rounds by outcome: the louder answered; the quieter did (the louder claimed past half the window); both; neither. */
const outcomes = { louder: 0, quieter: 0, both: 0, neither: 0 }
const exceptions: string[] = []

/** Claims on `speaker`'s arbiter; resolves with the outcome and its time in ms. */
async function timedClaim(
  who: typeof kitchen,
  levelDb: number,
): Promise<{ won: boolean; ms: number }> {
  const t0 = performance.now()
  const won = await who.arbiter.claim(heard(levelDb))
  return { won, ms: performance.now() - t0 }
}

for (let i = 0; i < WARMUP + ROUNDS; i++) {
  // Past the previous round's settle time on both speakers: the loser's round may have opened up
  // to a window after the winner's (a delayed claim), and closes that much later.
  await sleep(DEFAULT_WAKE_WINDOW_MS + SETTLE_MS + 20)
  const c = cases[i % cases.length] as Case
  // The louder speaker alternates, so neither connection is always the winner's.
  const [loud, quiet] = i % 2 === 0 ? [kitchen, hall] : [hall, kitchen]
  let w: Promise<{ won: boolean; ms: number }>
  let l: Promise<{ won: boolean; ms: number }>
  if (c === 'together') {
    w = timedClaim(loud, -25)
    l = timedClaim(quiet, -35)
  } else if (c === 'better first') {
    w = timedClaim(loud, -25)
    await sleep(STAGGER_MS)
    l = timedClaim(quiet, -35)
  } else {
    l = timedClaim(quiet, -35)
    await sleep(STAGGER_MS)
    w = timedClaim(loud, -25)
  }
  const t0 = performance.now()
  const floor = sleep(DEFAULT_WAKE_WINDOW_MS).then(() => performance.now() - t0)
  const [win, lose, floorMs] = await Promise.all([w, l, floor])
  if (i < WARMUP) continue
  const outcome =
    win.won && lose.won ? 'both' : win.won ? 'louder' : lose.won ? 'quieter' : 'neither'
  outcomes[outcome]++
  if (outcome === 'both' || outcome === 'neither') {
    // With the timer of one window beside it: how late this loop ran in that round.
    exceptions.push(`${outcome} (${c}; the window's timer took ${floorMs.toFixed(0)} ms)`)
  }
  times['floor: setTimeout(window)'].push(floorMs)
  if (outcome === 'louder') {
    times.winner.push(win.ms)
    times[`loser, ${c}`].push(lose.ms)
  }
}
await kitchen.close()
await hall.close()
await broker.stop()

console.log(machineLine())
console.log(
  `window ${DEFAULT_WAKE_WINDOW_MS} ms · ${ROUNDS} rounds after ${WARMUP} warm-up · answered by the louder ${outcomes.louder}, the quieter ${outcomes.quieter}, both ${outcomes.both}, neither ${outcomes.neither} · load average ${loadavg()[0]?.toFixed(1)}`,
)
if (exceptions.length > 0) console.log(`rounds with two or no answers: ${exceptions.join('; ')}`)
console.log('\n| decision | n | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|')
for (const [name, xs] of Object.entries(times)) {
  xs.sort((a, b) => a - b)
  console.log(
    `| ${name} | ${xs.length} | ${quantile(xs, 0.5).toFixed(2)} | ${quantile(xs, 0.99).toFixed(2)} | ${(xs.at(-1) ?? 0).toFixed(2)} |`,
  )
}
process.exit(outcomes.both + outcomes.neither === 0 ? 0 : 1)
