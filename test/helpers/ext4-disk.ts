import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { missingCommands, REQUIRE_SYSTEM, systemEnv } from './system.js'

/**
 * The SD card stand-in: an ext4 image on a loop device, mounted `errors=remount-ro` as Raspberry Pi
 * OS mounts its root. `fail()` injects an ext4 error (`/sys/fs/ext4/<dev>/trigger_fs_error`): the
 * kernel aborts the journal and turns the filesystem read-only at once, and what it had not yet
 * committed to the image is gone — as when a card throws an error mid-write. `repair()` unmounts,
 * runs `e2fsck -fy` and mounts again: the next boot.
 */
export interface Ext4Disk {
  readonly dir: string
  /** The loop device's name (`loop3`): its counters are in /sys/block/<name>/stat. */
  device(): string
  fail(): void
  repair(): { fsck: number }
  release(): void
}

/**
 * `directIo`: the loop device bypasses the host's page cache, so an fsync waits for the disk
 * underneath (the benchmark's slow-disk stand-in).
 */
export function ext4Disk(sizeMb = 32, options: { directIo?: boolean } = {}): Ext4Disk | undefined {
  if (missingCommands('losetup', 'mkfs.ext4', 'e2fsck', 'mount', 'umount', 'findmnt')) return
  const skip = (why: string): undefined => {
    const reason = `skipped: cannot mount an ext4 image on a loop device here (${why}; needs root and /dev/loop-control)`
    if (REQUIRE_SYSTEM) throw new Error(`NOCTURN_REQUIRE_SYSTEM=1 but ${reason.slice(9)}`)
    process.stdout.write(`${reason}\n`)
    return undefined
  }
  if (process.getuid?.() !== 0) return skip('not root')
  if (!existsSync('/dev/loop-control')) return skip('no /dev/loop-control')
  const base = mkdtempSync(join(tmpdir(), 'nocturn-ext4-'))
  const image = join(base, 'card.img')
  const dir = join(base, 'mnt')
  mkdirSync(dir)
  writeFileSync(image, '')
  spawnSync('truncate', ['-s', `${sizeMb}M`, image])
  const env = systemEnv()
  const run = (cmd: string, args: string[]) => spawnSync(cmd, args, { env, encoding: 'utf8' })
  const mkfs = run('mkfs.ext4', ['-q', '-F', image])
  if (mkfs.status !== 0) return skip(`mkfs.ext4: ${mkfs.stderr.trim()}`)
  // mount's own loop option cannot ask for direct I/O: losetup sets the device up for it.
  let loop: string | undefined
  const mount = () => {
    if (!options.directIo) return run('mount', ['-o', 'loop,errors=remount-ro', image, dir])
    const l = run('losetup', ['--direct-io=on', '--find', '--show', image])
    if (l.status !== 0) return l
    loop = l.stdout.trim()
    return run('mount', ['-o', 'errors=remount-ro', loop, dir])
  }
  const m = mount()
  if (m.status !== 0) return skip(`mount -o loop: ${m.stderr.trim()}`)
  const device = () => basename(run('findmnt', ['-n', '-o', 'SOURCE', dir]).stdout.trim())
  const umount = () => {
    const u = run('umount', [dir])
    if (u.status !== 0) throw new Error(`umount ${dir}: ${u.stderr.trim()}`)
    if (loop) run('losetup', ['-d', loop])
  }
  return {
    dir,
    device,
    fail: () => writeFileSync(`/sys/fs/ext4/${device()}/trigger_fs_error`, 'nocturn test'),
    repair: () => {
      umount()
      const fsck = run('e2fsck', ['-fy', image])
      // 0: clean, 1: errors corrected. Anything else: the image is beyond what a boot would fix.
      if ((fsck.status ?? 8) > 1) throw new Error(`e2fsck ${image}: ${fsck.stdout}${fsck.stderr}`)
      const again = mount()
      if (again.status !== 0) throw new Error(`mount ${image}: ${again.stderr.trim()}`)
      return { fsck: fsck.status ?? 0 }
    },
    release: () => {
      run('umount', ['-l', dir])
      if (loop) run('losetup', ['-d', loop])
      rmSync(base, { recursive: true, force: true })
    },
  }
}
