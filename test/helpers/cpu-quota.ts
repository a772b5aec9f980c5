import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * A CPU quota for one child process, so a test can run Nocturn as slowly as a small board would:
 * a cgroup of our own with `cpu.max` (cgroup v2) or `cpu.cfs_quota_us` (v1), the child moving
 * itself in before it execs. Needs write access to the cgroup tree (root, or a delegated
 * subtree); `systemd-run --scope -p CPUQuota=` does the same where systemd runs the machine.
 */
export interface CpuQuota {
  /** `sh -c` prefix that moves the shell into the cgroup before it execs the command. */
  readonly enter: string
  readonly dir: string
  remove(): void
}

const PERIOD_US = 100_000

/** Makes a cgroup limited to `percent` of one core, or returns why it cannot. */
export function makeCpuQuota(name: string, percent: number): CpuQuota | string {
  const quota = Math.round((PERIOD_US * percent) / 100)
  const v2 = '/sys/fs/cgroup'
  const v1 = '/sys/fs/cgroup/cpu'
  try {
    if (existsSync(join(v2, 'cgroup.controllers'))) {
      const controllers = readFileSync(join(v2, 'cgroup.controllers'), 'utf8')
      if (!controllers.split(/\s+/).includes('cpu')) return 'cgroup v2 without the cpu controller'
      const dir = join(v2, `${name}-${process.pid}`)
      mkdirSync(dir)
      writeFileSync(join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`)
      return handle(dir)
    }
    if (existsSync(join(v1, 'cpu.cfs_quota_us'))) {
      const dir = join(v1, `${name}-${process.pid}`)
      mkdirSync(dir)
      writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US))
      writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quota))
      return handle(dir)
    }
    return 'no cgroup cpu controller mounted'
  } catch (err) {
    return `cannot make a cgroup here (${err instanceof Error ? err.message : String(err)})`
  }
}

function handle(dir: string): CpuQuota {
  return {
    dir,
    enter: `echo $$ > ${dir}/cgroup.procs && exec`,
    remove: () => {
      try {
        rmdirSync(dir)
      } catch {
        // Still holds a process (one that outlived its test): the kernel keeps it until it exits.
      }
    },
  }
}

export interface QuotaRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

/** Runs `command` (a shell word list, already quoted) inside the quota; resolves when it exits. */
export function runInQuota(
  q: CpuQuota,
  command: string,
  opts: { cwd: string; env?: NodeJS.ProcessEnv; killAfterMs: number },
): Promise<QuotaRun> {
  const t0 = Date.now()
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `${q.enter} ${command}`], {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString()
    })
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString()
    })
    // A guard against a hang, far beyond what the run needs; the test then fails on the exit code.
    const guard = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(guard)
      resolve({ code, stdout, stderr, ms: Date.now() - t0 })
    })
  })
}

/** Moves a running process (every thread of it) into the quota, from now on. */
export function moveIntoQuota(q: CpuQuota, pid: number): void {
  writeFileSync(join(q.dir, 'cgroup.procs'), String(pid))
}
