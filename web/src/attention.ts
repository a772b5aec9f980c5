/**
 * Getting a person's attention when a request arrives while the app is open: a short tone (Web
 * Audio, no asset to fetch), a vibration where the browser allows it, the count in the title and
 * the app badge, and a system notification through the service worker on a secure (HTTPS) page.
 */
export class Attention {
  #audio: AudioContext | undefined
  readonly #baseTitle: string

  constructor() {
    this.#baseTitle = document.title
  }

  /** Browsers allow sound only after a tap; the first tap anywhere unlocks it. */
  unlockOnFirstTap(): void {
    const unlock = () => {
      try {
        this.#audio ??= new AudioContext()
        void this.#audio.resume()
      } catch {
        // No Web Audio: the other signals still work.
      }
      document.removeEventListener('pointerdown', unlock)
    }
    document.addEventListener('pointerdown', unlock)
  }

  newRequest(action: string, speaker: string): void {
    this.#tone()
    navigator.vibrate?.([180, 80, 180])
    if (document.hidden || !document.hasFocus()) void this.#notify(action, speaker)
  }

  count(pending: number): void {
    document.title = pending > 0 ? `(${pending}) ${this.#baseTitle}` : this.#baseTitle
    const nav = navigator as Navigator & {
      setAppBadge?: (n: number) => Promise<void>
      clearAppBadge?: () => Promise<void>
    }
    if (pending > 0) void nav.setAppBadge?.(pending).catch(() => {})
    else void nav.clearAppBadge?.().catch(() => {})
  }

  /** System notifications need a secure context (HTTPS) and the person's permission. */
  static notificationsPossible(): boolean {
    return window.isSecureContext && 'serviceWorker' in navigator && 'Notification' in window
  }

  async #notify(action: string, speaker: string): Promise<void> {
    if (!Attention.notificationsPossible() || Notification.permission !== 'granted') return
    // Subscribed to Web Push, the service worker shows each request itself, verified, with its
    // buttons (push-subscription.ts): a second notice from the page would only repeat it.
    const all = await navigator.serviceWorker.getRegistrations()
    if (all.some((r) => r.scope.includes('/push/'))) return
    const reg = await navigator.serviceWorker.getRegistration()
    await reg?.showNotification(`${speaker} asks`, {
      body: `May I ${action}?`,
      tag: 'nocturn-approval',
    })
  }

  #tone(): void {
    const ctx = this.#audio
    if (ctx?.state !== 'running') return
    const osc = ctx.createOscillator()
    const gain = ctx.createGain()
    osc.frequency.value = 880
    gain.gain.setValueAtTime(0.2, ctx.currentTime)
    gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + 0.35)
    osc.connect(gain).connect(ctx.destination)
    osc.start()
    osc.stop(ctx.currentTime + 0.35)
  }
}
