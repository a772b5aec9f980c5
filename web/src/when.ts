/**
 * Times as a household says them (issue 44): "Today 09:18", "Yesterday 18:02", "Monday 1
 * December 07:30" — the day in words, the time as the phone's own settings write it, no seconds.
 */
export function clock(at: number): string {
  return new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
}

/** "Today", "Yesterday", "Tomorrow", else the weekday and date. */
export function dayName(at: number, now = Date.now()): string {
  const start = (t: number) => {
    const d = new Date(t)
    return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime()
  }
  const days = Math.round((start(now) - start(at)) / 86_400_000)
  if (days === 0) return 'Today'
  if (days === 1) return 'Yesterday'
  if (days === -1) return 'Tomorrow'
  return new Date(at).toLocaleDateString([], { weekday: 'long', day: 'numeric', month: 'long' })
}

export function when(at: number, now = Date.now()): string {
  return `${dayName(at, now)} ${clock(at)}`
}

/** A time to come: "14:05" later today, else with its day ("tomorrow 09:00"). */
export function until(at: number, now = Date.now()): string {
  const day = dayName(at, now)
  if (day === 'Today') return clock(at)
  return `${day === 'Tomorrow' ? 'tomorrow' : day} ${clock(at)}`
}
