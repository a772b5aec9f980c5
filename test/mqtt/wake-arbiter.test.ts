import mqtt from 'mqtt'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  claimNumbers,
  newNonce,
  outranks,
  PROTOCOL_VERSION,
  wakeTopic,
} from '../../src/protocol/index.js'
import { freePort, mosquittoBroker, PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { heard, type WakeSpeaker, wakeSpeaker } from '../helpers/wake-speakers.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')
const TOPIC = wakeTopic(PREFIX)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Resolves with `claim`'s outcome, noting in `order` when it settled. */
function settled(claim: Promise<boolean>, name: string, order: string[]): Promise<boolean> {
  return claim.then((won) => {
    order.push(name)
    return won
  })
}

/** A well-formed claim from the cellar, as loud and sure as a claim can be, with `over` on top. */
function loud(over: Record<string, unknown> = {}): string {
  return JSON.stringify({
    v: PROTOCOL_VERSION,
    device: 'cellar',
    id: newNonce(),
    level: 0,
    score: 1,
    at: Date.now(),
    ...over,
  })
}

describe.skipIf(skip)('several speakers in one home: the wake arbiter on Mosquitto', () => {
  let broker: TestBroker
  // Closed after every test, passed or not: a speaker left connected would fight the next test's
  // speaker of the same name for its client id.
  const open: WakeSpeaker[] = []
  const speaker = async (...args: Parameters<typeof wakeSpeaker>) => {
    const s = await wakeSpeaker(...args)
    open.push(s)
    return s
  }
  const clients: mqtt.MqttClient[] = []
  /** Someone else on the household broker, with write access to everything. */
  const intruder = async () => {
    const c = await mqtt.connectAsync(broker.url, { ...USERS.intruder, reconnectPeriod: 0 })
    clients.push(c)
    return c
  }

  beforeAll(async () => {
    broker = mosquittoBroker(await freePort(), {
      // A device user whose ACL lets it read the household's topics but write none of them.
      extraAcl: [`user ${USERS.lockedDevice.username}`, `topic read ${PREFIX}/#`],
    })
    await broker.start()
  })
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close()
    for (const c of clients.splice(0)) await c.endAsync(true)
  })
  afterAll(async () => {
    await broker?.stop()
  })

  it('exactly one of two speakers answers, in each of 150 rounds: either one first, or both at once', async () => {
    // Exactly one answer needs every claim to cross the broker within a quarter of the window. On
    // this shared two-core machine under load a claim was seen to take over 140 ms (the appliance's
    // 150 ms window is for a board that runs its own loop on time: bench/RESULTS.md), so the test
    // uses a wider window; the rule and its margins scale with it. A short settle time lets the
    // rounds follow each other quickly; the claims come up to 60 ms apart, within the first half.
    const windowMs = 250
    const settleMs = 40
    const ROUNDS = 150
    // Between rounds, a window past both settle times: a claim this machine delayed past the next
    // round's start opened a round of its own there, and both speakers of that next one yielded
    // as late (CI saw it once with 60 ms between them). On a board the next wake comes seconds later.
    const betweenMs = settleMs + windowMs
    // The window fixed (not measured down): the rule is what is tested here, at a window whose
    // quarter this loaded machine's hops mostly fit in; the measured window has its own test.
    const fixed = { windowMs, minWindowMs: windowMs, settleMs }
    const kitchen = await speaker(broker.url, 'kitchen', fixed)
    const hall = await speaker(broker.url, 'hall', fixed)
    const last = (s: WakeSpeaker) => s.log.withEvent('wake_arbitrated').at(-1)?.fields.reason
    // How long each claim took to cross the broker, seen by a third client in this process: the
    // guarantee holds only while that stays under a quarter of the window, and a round where this
    // machine held a claim back longer is reported, not judged.
    const claimedAt = new Map<string, number>()
    const hops: number[] = []
    const watcher = await intruder()
    watcher.on('message', (_t, p) => {
      const device = p.length > 0 ? String(JSON.parse(p.toString()).device) : ''
      const at = claimedAt.get(device)
      if (at !== undefined) hops.push(performance.now() - at)
    })
    await watcher.subscribeAsync(TOPIC, { qos: 0 })
    const claimOn = (s: WakeSpeaker, name: string, d: ReturnType<typeof heard>) => {
      claimedAt.set(name, performance.now())
      return s.arbiter.claim(d)
    }
    const wrong: string[] = []
    const yieldedUncompared: string[] = []
    const heldBack: string[] = []
    const orders = ['kitchen-first', 'hall-first', 'together'] as const
    for (let i = 0; i < ROUNDS; i++) {
      // Levels often equal (then the score, then the device id decides), scores sometimes equal.
      const k = heard(-30 + (i % 4), 0.8 + (i % 3) * 0.05)
      const h = heard(-30 + ((i >> 2) % 4), 0.8 + ((i >> 1) % 3) * 0.05)
      const order = orders[i % 3] as (typeof orders)[number]
      const gapMs = (i * 7) % 61
      let kClaim: Promise<boolean>
      let hClaim: Promise<boolean>
      hops.length = 0
      if (order === 'kitchen-first') {
        kClaim = claimOn(kitchen, 'kitchen', k)
        await sleep(gapMs)
        hClaim = claimOn(hall, 'hall', h)
      } else if (order === 'hall-first') {
        hClaim = claimOn(hall, 'hall', h)
        await sleep(gapMs)
        kClaim = claimOn(kitchen, 'kitchen', k)
      } else {
        kClaim = claimOn(kitchen, 'kitchen', k)
        hClaim = claimOn(hall, 'hall', h)
      }
      const [kWon, hWon] = await Promise.all([kClaim, hClaim])
      const hop = Math.max(0, ...hops)
      // The window is measured (at most windowMs): the guarantee is judged against the one used.
      const used = Math.min(
        ...[kitchen, hall].map((s) =>
          Number(s.log.withEvent('wake_arbitrated').at(-1)?.fields.windowMs ?? windowMs),
        ),
      )
      const kitchenBest = outranks(
        { device: 'kitchen', ...claimNumbers(k.levelDb, k.score) },
        { device: 'hall', ...claimNumbers(h.levelDb, h.score) },
      )
      const round = `round ${i} (${order}, ${gapMs} ms): kitchen ${k.levelDb} dB ${k.score} → ${kWon} (${last(kitchen)}), hall ${h.levelDb} dB ${h.score} → ${hWon} (${last(hall)})`
      if (hop > used / 4) {
        heldBack.push(`${round}, a claim took ${hop.toFixed(0)} ms`)
        await sleep(betweenMs)
        continue
      }
      // Never both, never neither.
      if (kWon === hWon) wrong.push(round)
      // A loser that compared claims lost to the better one. One that yielded without comparing
      // ('late': it claimed too near the round's end; 'taken': just after it) did so because this
      // shared machine delayed its claim, and the first claim's speaker answered alone.
      const loserReason = kWon ? last(hall) : last(kitchen)
      if (loserReason === 'outranked' && kWon !== kitchenBest) wrong.push(round)
      else if (loserReason !== 'outranked') yieldedUncompared.push(round)
      // Past the settle time on both: the loser's round may close up to a hop after the winner's.
      await sleep(betweenMs)
    }
    expect(wrong).toEqual([])
    if (heldBack.length > 0) {
      process.stdout.write(
        `rounds not judged (the machine held a claim back): ${heldBack.join('; ')}\n`,
      )
    }
    // A machine so busy that most rounds cannot be judged proves nothing either way.
    expect(heldBack.length).toBeLessThan(ROUNDS / 2)
    if (yieldedUncompared.length > 0) {
      process.stdout.write(
        `rounds not compared (a delayed claim): ${yieldedUncompared.join('; ')}\n`,
      )
    }
    expect(kitchen.log.withEvent('wake_claim_unheard')).toEqual([])
    expect(hall.log.withEvent('wake_claim_unheard')).toEqual([])
  }, 180_000)

  it('the speaker that heard it worse goes back to sleep as soon as the better claim is there, without waiting out the window', async () => {
    // A long window, fixed, makes "at once" plain: the loser settles while the winner still waits.
    const windowMs = 1500
    const kitchen = await speaker(broker.url, 'kitchen', { windowMs, minWindowMs: windowMs })
    const hall = await speaker(broker.url, 'hall', { windowMs, minWindowMs: windowMs })

    /**
     * `first` claims, `second` 100 ms later (time for the first claim to cross the broker on a
     * loaded machine, well inside half the window); the order in which they and half the window ended.
     */
    const race = async (
      first: [WakeSpeaker, string, number],
      second: [WakeSpeaker, string, number],
    ) => {
      const order: string[] = []
      const a = settled(first[0].arbiter.claim(heard(first[2])), first[1], order)
      await sleep(100)
      const b = settled(second[0].arbiter.claim(heard(second[2])), second[1], order)
      const halfWindow = sleep(windowMs / 2).then(() => order.push('half the window'))
      const won = await Promise.all([a, b])
      await halfWindow
      return { won, order }
    }

    // The worse claim first: it yields when the better one arrives.
    expect(await race([hall, 'hall', -40], [kitchen, 'kitchen', -25])).toEqual({
      won: [false, true],
      order: ['hall', 'half the window', 'kitchen'],
    })
    await sleep(1100)

    // The better claim first: the worse one yields the moment it claims, and sends nothing.
    const heardOnBroker: string[] = []
    const watcher = await intruder()
    watcher.on('message', (_t, p) => heardOnBroker.push(p.toString()))
    await watcher.subscribeAsync(TOPIC, { qos: 0 })
    expect(await race([kitchen, 'kitchen', -25], [hall, 'hall', -40])).toEqual({
      won: [true, false],
      order: ['hall', 'half the window', 'kitchen'],
    })
    expect(heardOnBroker.map((p) => JSON.parse(p).device)).toEqual(['kitchen'])
    expect(
      hall.log.withEvent('wake_arbitrated').map((r) => [r.fields.reason, r.fields.by]),
    ).toEqual([
      ['outranked', 'kitchen'],
      ['outranked', 'kitchen'],
    ])
  })

  it('a barge-in: the speaker answering takes its wake at once and its claim makes a louder speaker yield, whether that one claimed first or after', async () => {
    const windowMs = 1500
    const kitchen = await speaker(broker.url, 'kitchen', { windowMs, minWindowMs: windowMs })
    const hall = await speaker(broker.url, 'hall', { windowMs, minWindowMs: windowMs })
    const heardOnBroker: string[] = []
    const watcher = await intruder()
    watcher.on('message', (_t, p) => heardOnBroker.push(p.toString()))
    await watcher.subscribeAsync(TOPIC, { qos: 0 })

    // The hall claims first, louder; the kitchen, in a session, answers its wake: the hall yields
    // as the kitchen's claim arrives, long before its window would have closed.
    const order: string[] = []
    const hallWon = settled(hall.arbiter.claim(heard(-10)), 'hall', order)
    await until(() => heardOnBroker.length === 1, 'the hall’s claim on the broker')
    kitchen.arbiter.answering(heard(-40))
    const halfWindow = sleep(windowMs / 2).then(() => order.push('half the window'))
    expect(await hallWon).toBe(false)
    await halfWindow
    expect(order).toEqual(['hall', 'half the window'])
    expect(JSON.parse(heardOnBroker[1] as string)).toMatchObject({
      device: 'kitchen',
      answering: true,
      level: -40,
    })
    await sleep(windowMs + 1100)

    // The kitchen's answering claim first: the louder hall yields when it wakes, claiming nothing.
    kitchen.arbiter.answering(heard(-40))
    await until(() => heardOnBroker.length === 3, 'the kitchen’s claim on the broker')
    expect(await hall.arbiter.claim(heard(-10))).toBe(false)
    await sleep(100)
    expect(heardOnBroker.map((p) => JSON.parse(p).device)).toEqual(['hall', 'kitchen', 'kitchen'])
    expect(
      hall.log
        .withEvent('wake_arbitrated')
        .map((r) => [r.fields.won, r.fields.reason, r.fields.by]),
    ).toEqual([
      [false, 'outranked', 'kitchen'],
      [false, 'outranked', 'kitchen'],
    ])
    expect(
      kitchen.log.withEvent('wake_arbitrated').map((r) => [r.fields.won, r.fields.reason]),
    ).toEqual([
      [true, 'answering'],
      [true, 'answering'],
    ])
    expect(kitchen.log.withEvent('wake_claim_unheard')).toEqual([])
  })

  it('the window is measured and travels with the claim: the speaker that joins a round times it by the opener’s window', async () => {
    // A floor of 400 ms under the measured window: the hall's claim must cross the broker inside
    // the kitchen's window to join its round, and a loaded CI machine has taken a hop past the
    // 80 ms floor a quiet one measures. What is tested is that the window is measured and travels.
    const timing = { settleMs: 40, windowMs: 1500, minWindowMs: 400 }
    const kitchen = await speaker(broker.url, 'kitchen', timing)
    const hall = await speaker(broker.url, 'hall', timing)
    const onBroker: { device: string; window?: number }[] = []
    const watcher = await intruder()
    watcher.on('message', (_t, p) => onBroker.push(JSON.parse(p.toString())))
    await watcher.subscribeAsync(TOPIC, { qos: 0 })
    const windows = (s: WakeSpeaker) =>
      s.log.withEvent('wake_arbitrated').map((r) => r.fields.windowMs)
    // The kitchen opens each round; the hall, louder, joins it as soon as the kitchen's claim is there.
    let joined: Promise<boolean> | undefined
    hall.connection.onMessage((_t, p) => {
      if (p.length > 0 && JSON.parse(p.toString()).device === 'kitchen') {
        joined = hall.arbiter.claim(heard(-20))
      }
    })
    for (let i = 0; i < 5; i++) {
      joined = undefined
      const k = await kitchen.arbiter.claim(heard(-30))
      expect([k, await joined]).toEqual([false, true])
      await sleep(300)
    }
    const sent = (device: string) =>
      onBroker.filter((c) => c.device === device).map((c) => c.window)
    expect(sent('kitchen')).toHaveLength(5)
    // Each round's window is the one its opener measured and sent, and the joiner timed it so.
    expect(sent('hall')).toEqual(sent('kitchen'))
    expect(windows(hall)).toEqual(sent('kitchen'))
    // Measured (its hops, here from the speakers' own statuses on), so below the configured one.
    for (const w of sent('kitchen')) expect(w).toBeGreaterThanOrEqual(400)
    for (const w of sent('kitchen')) expect(w).toBeLessThan(1500)
    console.log(`measured windows (ms): ${sent('kitchen').join(', ')}`)
  })

  it('a claim without a window (an older speaker) opens a round of the default window', async () => {
    const kitchen = await speaker(broker.url, 'kitchen', { windowMs: 1500 })
    const house = await intruder()
    // Weaker than the kitchen's claim below: it does not make the kitchen yield, only opens the round.
    await house.publishAsync(TOPIC, loud({ level: -90, window: undefined }), { qos: 1 })
    await sleep(20)
    expect(await kitchen.arbiter.claim(heard(-20))).toBe(true)
    const [claim] = kitchen.log.withEvent('wake_arbitrated')
    expect(claim?.fields.windowMs).toBe(150)
  })

  it('a speaker that wakes just after a round was decided yields: that round’s winner is answering', async () => {
    const kitchen = await speaker(broker.url, 'kitchen')
    const hall = await speaker(broker.url, 'hall')
    const kitchenWon = await kitchen.arbiter.claim(heard(-40))
    // The hall's own round, opened when the kitchen's claim reached it, has closed by now (a hop
    // under load can take 100 ms and more), and the settle time after it has not passed.
    await sleep(200)
    // Its detector fired later on the same words; it heard them louder, but the round is over.
    const hallWon = await hall.arbiter.claim(heard(-20))
    expect([kitchenWon, hallWon]).toEqual([true, false])
    expect(hall.log.withEvent('wake_arbitrated').map((r) => r.fields.reason)).toEqual(['taken'])
  })

  it('a speaker with no broker, or whose broker is down, answers by itself at once', async () => {
    const windowMs = 1500
    const window = () => sleep(windowMs).then(() => 'waited out the window')
    // Nothing listens on this port.
    const lonely = await speaker(`mqtt://127.0.0.1:${await freePort()}`, 'attic', {
      windowMs,
      connected: false,
    })
    expect(await Promise.race([lonely.arbiter.claim(heard(-30)), window()])).toBe(true)

    const port = await freePort()
    const own = mosquittoBroker(port)
    await own.start()
    try {
      const kitchen = await speaker(own.url, 'kitchen', { windowMs })
      await own.kill()
      const t0 = Date.now()
      while (kitchen.connection.connected && Date.now() - t0 < 5000) await sleep(10)
      expect(await Promise.race([kitchen.arbiter.claim(heard(-30)), window()])).toBe(true)
      for (const s of [lonely, kitchen]) {
        expect(s.log.withEvent('wake_arbitrated').map((r) => r.fields.reason)).toEqual(['alone'])
      }
    } finally {
      await own.stop()
    }
  })

  it('malformed, oversized, retained and impostor claims are logged and ignored, and the next wake is arbitrated as usual', async () => {
    const house = await intruder()
    // Waiting for every speaker that subscribes from now on.
    await house.publishAsync(TOPIC, loud(), { qos: 1, retain: true })
    const kitchen = await speaker(broker.url, 'kitchen')
    const hall = await speaker(broker.url, 'hall')
    await house.publishAsync(TOPIC, '', { qos: 1, retain: true })
    const junk = [
      'not json',
      '[1,2,3]',
      JSON.stringify({ v: 1 }),
      loud({ level: 6 }),
      loud({ score: 2 }),
      loud({ device: 'a/b' }),
      loud({ id: 'short' }),
      loud({ v: 2 }),
      JSON.stringify({ v: 1, pad: 'x'.repeat(4096) }),
      loud({ device: 'kitchen' }),
    ]
    for (const p of junk) await house.publishAsync(TOPIC, p, { qos: 1 })
    await sleep(200)
    for (const s of [kitchen, hall]) {
      // The hall takes the claim under the kitchen's id for a rival's: a loud one, which opens
      // a round that closes before the next wake below.
      expect(s.state.snapshot.refused.wake_claims).toEqual({
        retained: 1,
        'malformed-json': 1,
        'invalid-payload': 7,
        oversized: 1,
        ...(s === kitchen && { 'own-device': 1 }),
      })
      const logged = s.log.withEvent('wake_claim_ignored')
      expect(logged.length).toBeGreaterThan(0)
      expect(logged.every((r) => r.level === 'warn' && typeof r.fields.reason === 'string')).toBe(
        true,
      )
    }
    // None of it opened a round: the next wake is decided between the two speakers alone.
    await sleep(1100)
    const [k, h] = await Promise.all([
      kitchen.arbiter.claim(heard(-35)),
      hall.arbiter.claim(heard(-30)),
    ])
    expect([k, h]).toEqual([false, true])
  })

  it('a well-formed claim from anyone on the broker can only make a speaker yield, never answer', async () => {
    const kitchen = await speaker(broker.url, 'kitchen')
    const house = await intruder()
    await house.publishAsync(TOPIC, loud(), { qos: 1 })
    await sleep(20)
    expect(await kitchen.arbiter.claim(heard(-20))).toBe(false)
    // The next wake after the phantom's round is the kitchen's again.
    await sleep(1300)
    expect(await kitchen.arbiter.claim(heard(-20))).toBe(true)
  })

  it('a speaker the broker does not let write the wake topic answers, and says its claim went unheard', async () => {
    const locked = await speaker(broker.url, 'porch', { user: USERS.lockedDevice })
    // Alone in the household it answers at once, and learns within 2 s that the claim never came
    // back.
    expect(await locked.arbiter.claim(heard(-30))).toBe(true)
    await until(() => locked.log.withEvent('wake_claim_unheard').length > 0, 'the warning')
    expect(locked.log.withEvent('wake_claim_unheard')).toHaveLength(1)
  })
})
