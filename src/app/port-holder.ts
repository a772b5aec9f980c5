import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/**
 * Which program listens on a TCP port, as "name (pid N)", or undefined when it cannot be told:
 * the listening sockets' inodes from /proc/net/tcp and tcp6, then the process holding one among
 * its descriptors. Another user's processes are out of sight unless we run as root.
 */
export function portHolder(port: number): string | undefined {
  const inodes = new Set<string>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    try {
      text = readFileSync(table, 'latin1')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; the inode is the tenth field.
      const local = f[1]
      if (!local || f[3] !== '0A') continue
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port && f[9])
        inodes.add(f[9])
    }
  }
  if (inodes.size === 0) return undefined
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let fds: string[]
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      let link: string
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`)
      } catch {
        continue
      }
      const m = /^socket:\[(\d+)\]$/.exec(link)
      if (m?.[1] && inodes.has(m[1])) {
        const name = readFileSync(`/proc/${pid}/comm`, 'latin1').trim()
        return `${name} (pid ${pid})`
      }
    }
  }
  return undefined
}

/** What the status, the LED's reason and the log say when the phone app's port is not ours. */
export function portTakenReason(port: number, code: string | undefined): string {
  if (code === 'EACCES')
    return `the phone app is not served: port ${port} is not allowed for this user — set phoneApp.port to one above 1023 (or phoneApp.enabled to false)`
  const holder = code === 'EADDRINUSE' ? portHolder(port) : undefined
  return `the phone app is not served: port ${port} is taken by ${holder ?? 'another program'} — set phoneApp.port to a free port, or stop that program (or set phoneApp.enabled to false)`
}
