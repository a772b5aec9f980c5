import { execFile } from 'node:child_process'
import type { Config } from './schema.js'

export interface PcmProblem {
  readonly key: 'audio.capturePcm' | 'audio.playbackPcm'
  readonly line: string
}

/**
 * Whether the configured ALSA PCMs exist, asked of ALSA itself: `arecord` / `aplay` open each one
 * for a moment (playback plays 0.1 s of silence). `aplay -L` cannot answer this: it lists only PCMs
 * with a `hint` section. Only "Unknown PCM" and "cannot find card" count as missing; a busy device
 * (the service is running) or a missing alsa-utils is not an error here — `doctor` looks closer.
 */
export async function checkPcms(
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PcmProblem[]> {
  if (config.audio.backend !== 'alsa') return []
  const probes = [
    {
      key: 'audio.capturePcm' as const,
      pcm: config.audio.capturePcm,
      cmd: 'arecord',
      args: [
        '-q',
        '-D',
        config.audio.capturePcm,
        '-t',
        'raw',
        '-f',
        'S16_LE',
        '-r',
        '16000',
        '-c',
        '1',
        '-d',
        '1',
        '/dev/null',
      ],
    },
    {
      key: 'audio.playbackPcm' as const,
      pcm: config.audio.playbackPcm,
      cmd: 'aplay',
      args: [
        '-q',
        '-D',
        config.audio.playbackPcm,
        '-t',
        'raw',
        '-f',
        'S16_LE',
        '-r',
        '24000',
        '-c',
        '1',
        '-s',
        '2400',
        '/dev/zero',
      ],
    },
  ]
  const problems: PcmProblem[] = []
  for (const p of probes) {
    const stderr = await run(p.cmd, p.args, env)
    if (stderr === undefined) continue
    const card = /cannot find card '([^']*)'/.exec(stderr)
    if (card || /Unknown PCM/.test(stderr)) {
      problems.push({
        key: p.key,
        line: `${p.key}: ALSA has no PCM called "${p.pcm}"${card ? ` (no sound card "${card[1]}")` : ''} — define it in /etc/asound.conf (see hardware/asound.conf.example) or use plughw:CARD=<id>,DEV=0 with an id from "arecord -l"`,
      })
    }
  }
  return problems
}

/** stderr of the command, or undefined when it could not run at all. */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, timeout: 4000 }, (err, _out, stderr) => {
      if (err && typeof (err as NodeJS.ErrnoException).code === 'string') resolve(undefined)
      else resolve(String(stderr))
    })
  })
}
