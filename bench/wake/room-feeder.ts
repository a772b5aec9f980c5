// Feeds a room into a FIFO capture PCM (test/helpers/alsa.ts `hermeticAlsa('fifo')`) at the pace of
// real time, in its own process so the listening child's cgroup does not pay for it:
// `node --import tsx bench/wake/room-feeder.ts FIFO ROOM SECONDS`. The room is looped for SECONDS
// (plus a margin) once a reader (the child's arecord) holds the FIFO; it exits after that.
import { RoomFeeds } from '../../test/helpers/room-feed.js'
import { roomAudio } from './room-audio.js'

const [fifo, kind = 'quiet', secondsArg = '30'] = process.argv.slice(2)
if (!fifo) throw new Error('room-feeder: usage: room-feeder.ts FIFO ROOM SECONDS')
const seconds = Number(secondsArg) + 30
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
  } else if (Date.now() - started > 120_000) process.exit(1)
}, 20)
