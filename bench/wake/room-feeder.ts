// Feeds a room into a FIFO capture PCM (test/helpers/alsa.ts `hermeticAlsa('fifo')`) at the pace of
// real time, in its own process so the listening child's cgroup does not pay for it:
// `node --import tsx bench/wake/room-feeder.ts FIFO ROOM SECONDS LIMIT_MS`. The room is looped for
// SECONDS (plus a margin) once a reader (the child's arecord) holds the FIFO; it exits after that,
// or if none came within LIMIT_MS (the row's own time limit, wake-budget.bench.ts).
import { RoomFeeds } from '../../test/helpers/room-feed.js'
import { roomAudio } from './room-audio.js'

const [fifo, kind = 'quiet', secondsArg = '30', limitArg] = process.argv.slice(2)
// No default for the limit: a fixed one is what lost the 1.7 % rows' audio (below).
if (!fifo || !limitArg)
  throw new Error('room-feeder: usage: room-feeder.ts FIFO ROOM SECONDS LIMIT_MS')
const seconds = Number(secondsArg) + 30
/**
 * How long a reader may take to come: inside 1.7 % of a core the child's start (its loader, the
 * models) took over three minutes, and a feeder that waited a fixed 120 s was gone before its
 * arecord opened the FIFO — the row then heard nothing more and ran out its time.
 */
const readerWaitMs = Number(limitArg)
const room = roomAudio(kind)
const all = Buffer.alloc(seconds * 32_000)
for (let o = 0; o < all.length; o += room.length) all.set(room.subarray(0, all.length - o), o)
const feeds = new RoomFeeds([fifo])
feeds.start()
const started = Date.now()
const wait = setInterval(() => {
  if (feeds.heard(0, 20)) {
    clearInterval(wait)
    feeds.play(all, [{ i: 0 }])
    setTimeout(() => process.exit(0), seconds * 1000).unref()
  } else if (Date.now() - started > readerWaitMs) process.exit(1)
}, 20)
