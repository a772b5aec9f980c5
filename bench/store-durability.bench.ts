// The store's durability policy on a disk where an fsync waits for the device (docs/store.md):
//  1. what each kind of write holds the event loop for — a spoken piece (synchronous=NORMAL), a
//     synced one (FULL: typed, a tool's outcome, a grant, a timer), a scheduled checkpoint;
//  2. what reaches the disk in an hour, idle and busy (SD wear): write requests and KB at the loop
//     device, the upkeep running at its real interval, against the old policy (no checkpoint);
//  3. the store file's and its log's sizes over the busy minutes, and after the session's end.
// The disk: an ext4 image on a loop device with direct I/O (no host page cache under it), so an
// fsync reaches the machine's own disk. The counts (2, 3) do not depend on the disk's speed, the
// times (1) do.
// BENCH_BUSY_S sets the busy stretch (default 60 s, scaled to the hour).
// BENCH_SLOW_DISK=1 runs only (1), twice: as is, then in a child put in a new cgroup-v1 blkio group
// whose writes to the loop device are throttled to an SD card's pace (BENCH_SLOW_BPS, default
// 10 MB/s; BENCH_SLOW_IOPS, default 200: a class-10 card's sequential floor is 10 MB/s, and its
// sustained small random writes are a few hundred a second at best). The group is removed after.
import { spawnSync } from 'node:child_process'
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmdirSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import { realClock } from '../src/adapters/clock/real-clock.js'
import { SqliteStore } from '../src/adapters/sqlite/sqlite-store.js'
import { type Ext4Disk, ext4Disk } from '../test/helpers/ext4-disk.js'
import { machineLine, quantile } from './machine.js'

const BUSY_S = Number(process.env.BENCH_BUSY_S ?? 60)
const SLOW = process.env.BENCH_SLOW_DISK === '1'
const BLKIO = '/sys/fs/cgroup/blkio'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const piece = 'Could you turn the hallway light down to forty percent, please?'

/** Write requests and KB the loop device has completed so far (/sys/block/<dev>/stat). */
function written(): { requests: number; kb: number } {
  const f = readFileSync(`/sys/block/${disk?.device()}/stat`, 'latin1').trim().split(/\s+/)
  return { requests: Number(f[4]), kb: Number(f[6]) / 2 }
}
const size = (f: string) => {
  try {
    return statSync(f).size
  } catch {
    return 0
  }
}

function stats(times: number[]) {
  times.sort((a, b) => a - b)
  return {
    n: times.length,
    'p50 ms': +quantile(times, 0.5).toFixed(3),
    'p99 ms': +quantile(times, 0.99).toFixed(3),
    'max ms': +(times.at(-1) ?? 0).toFixed(3),
    // The throttle lets a slice's budget through at once and holds the rest to the next slice,
    // so the average rate shows in the total, the waiting in the tail.
    'total ms': Math.round(times.reduce((a, b) => a + b, 0)),
  }
}
const timed = (fn: () => void) => {
  const t0 = process.hrtime.bigint()
  fn()
  return Number(process.hrtime.bigint() - t0) / 1e6
}

/**
 * (1): what each kind of write holds the event loop for. First a raw 4 KB write + fsync, 100 times,
 * so the run shows whether the throttle took effect at all.
 */
function perWriteCost(dir: string, label: string) {
  const raw: number[] = []
  const fd = openSync(join(dir, `raw-${label}`), 'w')
  const block = Buffer.alloc(4096, 1)
  for (let i = 0; i < 100; i++)
    raw.push(
      timed(() => {
        writeSync(fd, block, 0, block.length, i * 4096)
        fsyncSync(fd)
      }),
    )
  closeSync(fd)
  {
    const store = new SqliteStore(join(dir, `cost-${label}.db`))
    const voice = store.createConversation({ channel: 'voice', at: 0 })
    const text = store.createConversation({ channel: 'text', at: 0 })
    const cheap: number[] = []
    const synced: number[] = []
    const checkpoint: number[] = []
    // Each kind on its own, so one's fsync does not land in another's time.
    for (let i = 0; i < 200; i++)
      cheap.push(
        timed(() => store.append(voice.id, { role: 'user', text: piece, channel: 'voice', at: i })),
      )
    for (let i = 0; i < 200; i++)
      synced.push(
        timed(() => store.append(text.id, { role: 'user', text: piece, channel: 'text', at: i })),
      )
    for (let i = 0; i < 200; i++) {
      store.append(voice.id, { role: 'user', text: piece, channel: 'voice', at: i })
      checkpoint.push(timed(() => store.checkpoint()))
    }
    store.close()
    console.log(`\nper-write cost, ${label}:`)
    console.table({
      'raw 4 KB write + fsync': stats(raw),
      'spoken piece (NORMAL)': stats(cheap),
      'typed / tool outcome / grant / timer (FULL)': stats(synced),
      'scheduled checkpoint (PASSIVE) after a piece': stats(checkpoint),
    })
  }
}

/** (1) again in a child whose writes to the loop device are throttled (a new blkio group). */
function throttledCost(dir: string, device: string) {
  const dev = readFileSync(`/sys/block/${device}/dev`, 'latin1').trim()
  const bps = Number(process.env.BENCH_SLOW_BPS ?? 10 * 1024 * 1024)
  const iops = Number(process.env.BENCH_SLOW_IOPS ?? 200)
  const group = join(BLKIO, `nocturn-bench-${process.pid}`)
  mkdirSync(group)
  try {
    writeFileSync(join(group, 'blkio.throttle.write_bps_device'), `${dev} ${bps}`)
    writeFileSync(join(group, 'blkio.throttle.write_iops_device'), `${dev} ${iops}`)
    console.log(`\nthrottle: ${group}, device ${dev}, ${bps} B/s, ${iops} write IOPS`)
    const before = written()
    const r = spawnSync(process.execPath, ['--import', 'tsx', import.meta.filename], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_COST_CHILD: JSON.stringify({ dir, group }) },
    })
    // What the group's own counter saw: the proof the throttle was on the writes that were timed.
    const served = readFileSync(join(group, 'blkio.throttle.io_serviced'), 'latin1')
    // The rest are the kernel's own (ext4's journal thread is in the root group, not throttled).
    const all = written().requests - before.requests
    console.log(
      `write requests at the loop device: ${all}, of them through the group: ${served.match(/ Write (\d+)/)?.[1] ?? '?'}`,
    )
    if (r.status !== 0) throw new Error(`throttled child exited ${r.status}`)
  } finally {
    rmdirSync(group) // empty once the child has exited
  }
}

// The throttled child: it joins its group before it opens anything, measures (1), and exits.
const child = process.env.BENCH_COST_CHILD
if (child) {
  const { dir, group } = JSON.parse(child) as { dir: string; group: string }
  writeFileSync(join(group, 'cgroup.procs'), String(process.pid))
  perWriteCost(dir, 'throttled')
  process.exit(0)
}
const disk = ext4Disk(64, { directIo: true })
if (!disk) process.exit(0)
try {
  console.log(machineLine())
  perWriteCost(disk.dir, 'unthrottled')
  if (SLOW) throttledCost(disk.dir, disk.device())
  else await durabilityOverTime(disk)
} finally {
  disk.release()
}

/** (2) and (3). */
async function durabilityOverTime(disk: Ext4Disk) {
  // 2 and 3. An idle stretch and a busy one, with and without the upkeep.
  const rows: Record<string, Record<string, number | string>> = {}
  const sizes: Record<string, Record<string, number>> = {}
  for (const policy of ['upkeep (this policy)', 'no checkpoint (before)'] as const) {
    const path = join(disk.dir, policy.startsWith('upkeep') ? 'upkeep.db' : 'before.db')
    const store = new SqliteStore(path)
    const stop = policy.startsWith('upkeep')
      ? store.startUpkeep({ clock: realClock(), onNotice: () => {} })
      : async () => {}
    // Seed: a year's worth would be bigger; a few hundred messages make a realistic page count.
    const old = store.createConversation({ channel: 'text', at: 0 })
    for (let i = 0; i < 300; i++)
      store.append(old.id, { role: 'user', text: piece, channel: 'voice', at: i })
    store.checkpoint('TRUNCATE')
    await sleep(3000) // the first copy is made at the first upkeep
    spawnSync('sync') // what the seeding left in the page cache is not the idle hour's
    await sleep(500)
    const idle0 = written()
    await sleep(20_000)
    const idle1 = written()
    // Busy: a spoken session, three transcript pieces a second, a tool outcome every 20 s.
    const conv = store.createConversation({ channel: 'voice', at: 1 })
    const t0 = Date.now()
    let n = 0
    while (Date.now() - t0 < BUSY_S * 1000) {
      store.append(conv.id, {
        role: n % 2 ? 'assistant' : 'user',
        text: piece,
        channel: 'voice',
        at: n,
        ...(n % 2 ? { toolCalls: [] } : {}),
      } as never)
      if (n % 60 === 59)
        store.append(conv.id, {
          role: 'tool',
          toolCallId: `c${n}`,
          toolName: 'set_timer',
          args: {},
          outcome: { ok: true, value: 'set' },
          channel: 'voice',
          at: n,
        } as never)
      n++
      const s = Math.floor((Date.now() - t0) / 10_000) * 10
      sizes[`${policy}: ${s} s`] ??= {
        'main KB': size(path) / 1024,
        'WAL KB': size(`${path}-wal`) / 1024,
      }
      await sleep(333)
    }
    if (policy.startsWith('upkeep')) store.checkpoint('TRUNCATE') // the session's end, as the appliance does
    await sleep(2500)
    const busy1 = written()
    sizes[`${policy}: after the session`] = {
      'main KB': size(path) / 1024,
      'WAL KB': size(`${path}-wal`) / 1024,
    }
    const hourIdle = 3600 / 20
    const hourBusy = 3600 / (BUSY_S + 2.5)
    rows[policy] = {
      'idle: requests/h': Math.round((idle1.requests - idle0.requests) * hourIdle),
      'idle: KB/h': Math.round((idle1.kb - idle0.kb) * hourIdle),
      'busy: requests/h': Math.round((busy1.requests - idle1.requests) * hourBusy),
      'busy: KB/h': Math.round((busy1.kb - idle1.kb) * hourBusy),
      'messages written': n,
    }
    await stop()
    store.close()
  }
  console.log(
    `\nwhat reaches the disk, scaled to an hour (idle: 20 s measured; busy: ${BUSY_S} s):`,
  )
  console.table(rows)
  console.log(
    `copy (once an hour while written): ${(size(join(disk.dir, 'upkeep.db.backup')) / 1024).toFixed(0)} KB`,
  )
  console.log('\nstore file and its log during the busy stretch:')
  console.table(sizes)
}
