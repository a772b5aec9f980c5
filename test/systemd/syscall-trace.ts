import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'

/** Every syscall group systemd knows, expanded to plain syscall names (nested groups resolved). */
export function syscallGroups(): (group: string) => Set<string> {
  const out = execFileSync('systemd-analyze', ['syscall-filter', '--no-pager'], {
    encoding: 'utf8',
  })
  const groups = new Map<string, string[]>()
  let current: string[] | undefined
  for (const line of out.split('\n')) {
    if (/^@\S+/.test(line)) {
      current = []
      groups.set(line.trim(), current)
    } else if (current && /^\s+[@a-z0-9_]/.test(line)) current.push(line.trim())
  }
  const expand = (g: string, seen: Set<string>): Set<string> => {
    const names = new Set<string>()
    for (const x of groups.get(g) ?? []) {
      if (!x.startsWith('@')) names.add(x)
      else if (!seen.has(x)) {
        seen.add(x)
        for (const y of expand(x, seen)) names.add(y)
      }
    }
    return names
  }
  return (g) => expand(g, new Set([g]))
}

/** What a unit's `SystemCallFilter=` lines admit: allow lists joined, then `~` lists taken away. */
export function admitted(filterLines: readonly string[], group: (g: string) => Set<string>) {
  const allow = new Set<string>()
  const deny = new Set<string>()
  for (const line of filterLines) {
    const negate = line.startsWith('~')
    for (const word of line.replace(/^~/, '').split(/\s+/).filter(Boolean)) {
      const names = word.startsWith('@') ? group(word) : new Set([word])
      for (const n of names) (negate ? deny : allow).add(n)
    }
  }
  return (syscall: string) => allow.has(syscall) && !deny.has(syscall)
}

/**
 * The syscalls in an `strace -f` log, per program: a child makes its calls as its parent's program
 * until it execs another. So a development tool a test happens to spawn can be told apart from node.
 */
export function syscallsByProgram(log: string, first: string): Map<string, Set<string>> {
  const parent = new Map<number, number>()
  const perPid = new Map<
    number,
    { before: Set<string>; after: Set<string>; exec?: string | undefined }
  >()
  const pendingExec = new Map<number, string>()
  let root: number | undefined
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    const m = /^(\d+)\s+(?:<\.\.\. )?([a-z0-9_]+)[( ]/.exec(line)
    if (!m) continue
    const pid = Number(m[1])
    const name = m[2] as string
    root ??= pid
    const p = perPid.get(pid) ?? { before: new Set<string>(), after: new Set<string>() }
    perPid.set(pid, p)
    ;(p.exec ? p.after : p.before).add(name)
    const done = /= (\d+)$/.exec(line)?.[1]
    if (/^(?:clone3?|fork|vfork)$/.test(name) && done) parent.set(Number(done), pid)
    if (name === 'execve') {
      const path = /execve\("([^"]+)"/.exec(line)?.[1]
      if (path) pendingExec.set(pid, basename(path))
      if (done === '0') p.exec = pendingExec.get(pid)
    }
  }
  const programOf = (pid: number, seen = 0): string => {
    const p = perPid.get(pid)
    if (p?.exec) return p.exec
    if (pid === root) return first
    const up = parent.get(pid)
    return up === undefined || seen > 64 ? '?' : programOf(up, seen + 1)
  }
  const calls = new Map<string, Set<string>>()
  const add = (prog: string, names: Set<string>) => {
    if (!calls.has(prog)) calls.set(prog, new Set())
    for (const n of names) calls.get(prog)?.add(n)
  }
  for (const [pid, p] of perPid) {
    const up = parent.get(pid)
    // Before its exec a child runs its parent's code (the spawn path); after it, its own program.
    add(p.exec ? (up === undefined ? first : programOf(up)) : programOf(pid), p.before)
    if (p.exec) add(p.exec, p.after)
  }
  return calls
}
