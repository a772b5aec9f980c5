import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A device that plays in real time without a sound card (bench/RESULTS.md): a PulseAudio
 * null sink at 24 kHz mono, reached from ALSA through the pulse plugin as `paplay` (playback)
 * and `pamon` (its monitor, for capture). A keepalive stream keeps the sink rendering, or the
 * first ~14 ms of each new stream go missing from the monitor.
 */
export interface PacedDevice {
  readonly env: NodeJS.ProcessEnv
  /** The pulse server's pid, to read its CPU time. */
  readonly serverPid: number | undefined
  stop(): Promise<void>
}

export function pacedDeviceAvailable(): string | undefined {
  for (const c of ['pulseaudio', 'pacat', 'parec']) {
    if (spawnSync('sh', ['-c', `command -v ${c}`]).status !== 0) return `${c} is not installed`
  }
  if (
    spawnSync('sh', ['-c', 'ls /usr/lib/*/alsa-lib/libasound_module_pcm_pulse.so']).status !== 0
  ) {
    return 'the ALSA pulse plugin (libasound2-plugins) is not installed'
  }
  return undefined
}

/**
 * `extraSinks` adds independent null sinks (each with its keepalive), reached as `play_<name>` and
 * `mon_<name>` (ALSA) and `<name>.monitor` (parec), so players can be measured side by side
 * without hearing each other.
 */
export async function startPacedDevice(extraSinks: readonly string[] = []): Promise<PacedDevice> {
  const d = mkdtempSync(join(tmpdir(), 'nocturn-pulse-'))
  mkdirSync(join(d, 'home'))
  mkdirSync(join(d, 'runtime'), { mode: 0o700 })
  writeFileSync(
    join(d, 'pa.conf'),
    ['vsink', ...extraSinks]
      .map(
        (n) => `load-module module-null-sink sink_name=${n} rate=24000 channels=1 format=s16le\n`,
      )
      .join('') +
      'load-module module-native-protocol-unix auth-anonymous=1\nset-default-sink vsink\n',
  )
  writeFileSync(
    join(d, 'asoundrc'),
    'pcm.paplay { type pulse; device "vsink" }\npcm.pamon { type pulse; device "vsink.monitor" }\n' +
      'pcm.!default { type asym; playback.pcm "paplay"; capture.pcm "pamon" }\n' +
      extraSinks
        .map(
          (n) =>
            `pcm.play_${n} { type pulse; device "${n}" }\npcm.mon_${n} { type pulse; device "${n}.monitor" }\n`,
        )
        .join(''),
  )
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: join(d, 'home'),
    PULSE_RUNTIME_PATH: join(d, 'runtime'),
    XDG_RUNTIME_DIR: join(d, 'runtime'),
    ALSA_CONFIG_PATH: join(d, 'asoundrc'),
    PULSE_SERVER: `unix:${join(d, 'runtime', 'native')}`,
  }
  const server = spawn(
    'pulseaudio',
    [
      '--daemonize=no',
      '--exit-idle-time=-1',
      '-n',
      '-F',
      join(d, 'pa.conf'),
      '--disallow-exit',
      '--log-target=stderr',
      '--log-level=error',
    ],
    { env, stdio: 'ignore' },
  )
  for (let i = 0; i < 100; i++) {
    if (spawnSync('pactl', ['info'], { env, stdio: 'ignore' }).status === 0) break
    await new Promise((r) => setTimeout(r, 50))
  }
  const keepalives = ['vsink', ...extraSinks].map((sink) =>
    spawn(
      'pacat',
      [
        '--playback',
        '--raw',
        '--format=s16le',
        '--rate=24000',
        '--channels=1',
        `--device=${sink}`,
        '--latency-msec=100',
        '--client-name=keepalive',
        '/dev/zero',
      ],
      { env, stdio: 'ignore' },
    ),
  )
  await new Promise((r) => setTimeout(r, 300))
  const children: ChildProcess[] = [...keepalives, server]
  return {
    env,
    serverPid: server.pid,
    async stop() {
      for (const c of children) {
        const gone = new Promise((r) => c.once('exit', r))
        c.kill('SIGTERM')
        await gone
      }
    },
  }
}
