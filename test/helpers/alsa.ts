import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A hermetic ALSA world for tests (what this alsa-lib really does: hardware/audio.md):
 * only our PCMs, through ALSA_CONFIG_PATH, backed by files instead of sound cards.
 * - `nocturn_cap` captures the bytes of `infile` (past its end alsa-lib 1.2.8 repeats the last
 *   block, so compare only the file's own length); `'fifo'` makes it a FIFO instead, which the
 *   test writes at the pace of real time (test/helpers/room-feed.ts);
 * - `nocturn_play` plays into `out.raw`, and with `truncate false` every new open goes to a new
 *   file (`out.raw.0001`, …), so a killed player's output and its successor's stay apart;
 * - `nocturn_stall` captures from a FIFO nobody writes: a device that delivers nothing;
 * - slaves are named PCMs and a `default` exists, or PortAudio's device scan aborts the process.
 * File PCMs are unpaced: they take audio as fast as it comes. Good for bytes, useless for timing.
 */
export interface HermeticAlsa {
  readonly dir: string
  /** The file (or FIFO) `capture` reads. */
  readonly infile: string
  readonly env: NodeJS.ProcessEnv
  readonly capture: string
  readonly playback: string
  readonly stall: string
  /** Everything written to the playback PCM so far, one entry per player that opened it. */
  played(): Buffer[]
}

/**
 * `stall: false` leaves the FIFO PCM out: PortAudio opens every PCM while it lists devices, and
 * opening that one blocks for ever.
 */
export function hermeticAlsa(
  infile: Uint8Array | 'fifo',
  options: { stall?: boolean } = {},
): HermeticAlsa {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-alsa-'))
  made.push(dir)
  const outDir = join(dir, 'out')
  mkdirSync(outDir)
  if (infile === 'fifo') execFileSync('mkfifo', [join(dir, 'in.raw')])
  else writeFileSync(join(dir, 'in.raw'), infile)
  execFileSync('mkfifo', [join(dir, 'stall.fifo')])
  const conf = join(dir, 'asound.conf')
  writeFileSync(
    conf,
    `pcm.nocturn_null { type null }
pcm.nocturn_cap {
  type file; slave.pcm "nocturn_null"; file "/dev/null"; infile "${dir}/in.raw"; format "raw"
  hint { show on; description "Nocturn test capture (file)" }
}
pcm.nocturn_play {
  type file; slave.pcm "nocturn_null"; file "${outDir}/out.raw"; format "raw"; truncate false
  hint { show on; description "Nocturn test playback (file)" }
}
${
  options.stall === false
    ? ''
    : `pcm.nocturn_stall {
  type file; slave.pcm "nocturn_null"; file "/dev/null"; infile "${dir}/stall.fifo"; format "raw"
  hint { show on; description "Nocturn test capture that never delivers" }
}
`
}pcm.!default { type asym; playback.pcm "nocturn_play"; capture.pcm "nocturn_cap" }
`,
  )
  return {
    dir,
    infile: join(dir, 'in.raw'),
    env: { ...process.env, ALSA_CONFIG_PATH: conf },
    capture: 'nocturn_cap',
    playback: 'nocturn_play',
    stall: 'nocturn_stall',
    played: () =>
      readdirSync(outDir)
        .sort()
        .map((f) => readFileSync(join(outDir, f))),
  }
}

const made: string[] = []
// The test process removes its scratch folders when it ends (the children are gone by then).
process.once('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

/** True while a process with this pid exists (a zombie counts: its /proc entry stays). */
export function processExists(pid: number): boolean {
  try {
    readFileSync(`/proc/${pid}/stat`)
    return true
  } catch {
    return false
  }
}
