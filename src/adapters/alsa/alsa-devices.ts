import { execFile } from 'node:child_process'

export interface PcmInfo {
  readonly name: string
  readonly description: string
}

/**
 * The PCMs ALSA knows by name, as `arecord -L` / `aplay -L` print them (name on its own line, its
 * description indented below). Only PCMs with a `hint` are listed — give the ones you define in
 * /etc/asound.conf a `hint { show on description "…" }`.
 */
export async function listAlsaPcms(
  direction: 'capture' | 'playback',
  env: NodeJS.ProcessEnv = process.env,
): Promise<PcmInfo[]> {
  const tool = direction === 'capture' ? 'arecord' : 'aplay'
  const out = await new Promise<string>((resolve, reject) => {
    execFile(tool, ['-L'], { env, timeout: 10_000 }, (error, stdout) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new Error(`${tool} is not installed (Debian: apt-get install alsa-utils)`))
      } else resolve(stdout)
    })
  })
  return parsePcmList(out)
}

export function parsePcmList(text: string): PcmInfo[] {
  const pcms: { name: string; description: string[] }[] = []
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    if (/^\s/.test(line)) pcms[pcms.length - 1]?.description.push(line.trim())
    else pcms.push({ name: line.trim(), description: [] })
  }
  return pcms.map((p) => ({ name: p.name, description: p.description.join(' — ') }))
}
