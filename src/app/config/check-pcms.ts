import { execFile } from 'node:child_process'
import { LIVE_INPUT_RATE_HZ, LIVE_OUTPUT_RATE_HZ } from '../../ports/live-llm.js'
import type { Config } from './schema.js'

export interface PcmProblem {
  readonly key: 'audio.capturePcm' | 'audio.playbackPcm'
  readonly line: string
}

export interface PcmProbe {
  readonly key: 'audio.capturePcm' | 'audio.playbackPcm'
  readonly pcm: string
  /**
   * ok: opened; missing: ALSA has no such PCM or card; busy: another process holds it;
   * denied: this user may not open it; no-tool: arecord/aplay is not installed; error: anything else.
   */
  readonly status: 'ok' | 'missing' | 'busy' | 'denied' | 'no-tool' | 'error'
  /** The first line of what ALSA said, when not ok. */
  readonly said?: string
  /** For missing: the sound card ALSA could not find. */
  readonly card?: string
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
  return (await probePcms(config, env))
    .filter((p) => p.status === 'missing')
    .map((p) => ({
      key: p.key,
      line: `${p.key}: ALSA has no PCM called "${p.pcm}"${p.card ? ` (no sound card "${p.card}")` : ''} — define it in /etc/asound.conf (see hardware/asound.conf.example) or use plughw:CARD=<id>,DEV=0 with an id from "arecord -l"`,
    }))
}

/** Opens the capture and the playback PCM once each, as the appliance will, and says how it went. */
export async function probePcms(
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PcmProbe[]> {
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
        String(LIVE_INPUT_RATE_HZ),
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
        String(LIVE_OUTPUT_RATE_HZ),
        '-c',
        '1',
        '-s',
        '2400',
        '/dev/zero',
      ],
    },
  ]
  const out: PcmProbe[] = []
  for (const p of probes) {
    const r = await run(p.cmd, p.args, env)
    const base = { key: p.key, pcm: p.pcm }
    if (r === undefined) {
      out.push({ ...base, status: 'no-tool' })
      continue
    }
    const said = r.stderr.trim().split('\n')[0]?.trim()
    const card = /cannot find card '([^']*)'/.exec(r.stderr)
    if (
      card ||
      /Unknown PCM|audio open error: No such file or directory|No such device/.test(r.stderr)
    ) {
      out.push({
        ...base,
        status: 'missing',
        ...(said && { said }),
        ...(card?.[1] && { card: card[1] }),
      })
    } else if (/busy/i.test(r.stderr)) {
      out.push({ ...base, status: 'busy', ...(said && { said }) })
    } else if (/Permission denied/i.test(r.stderr)) {
      out.push({ ...base, status: 'denied', ...(said && { said }) })
    } else if (r.failed) {
      out.push({ ...base, status: 'error', ...(said && { said }) })
    } else {
      out.push({ ...base, status: 'ok' })
    }
  }
  return out
}

/** stderr of the command and whether it failed, or undefined when it could not run at all. */
function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ stderr: string; failed: boolean } | undefined> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, timeout: 4000 }, (err, _out, stderr) => {
      if (err && typeof (err as NodeJS.ErrnoException).code === 'string') resolve(undefined)
      else resolve({ stderr: String(stderr), failed: err !== null })
    })
  })
}
