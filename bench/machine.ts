import { cpus, totalmem } from 'node:os'

/** One line naming the machine, for bench/RESULTS.md. */
export function machineLine(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown cpu'
  const mem = Math.round(totalmem() / 2 ** 30)
  return `${new Date().toISOString().slice(0, 10)} · ${process.platform}/${process.arch} · ${cpus().length}× ${cpu} · ${mem} GiB · Node ${process.version}`
}

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))
  return sorted[i] as number
}
