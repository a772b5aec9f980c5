import type { ProviderFailure, ProviderListener } from '../ports/provider-listener.js'
import type { DeviceState } from './device-state.js'

/** The device's fault while no provider can be reached: `error` on the LED and the status. */
export const VOICE_SERVICE_FAULT = 'voice service'

/**
 * The providers' health into the device's state, as the failover tells it: each provider's last
 * attempt (the status, the phone, Home Assistant), and while none could be reached a fault —
 * the LED's error pattern and the status's reason — cleared by the next provider reached.
 */
export class ProviderHealthListener implements ProviderListener {
  readonly #device: DeviceState

  constructor(device: DeviceState) {
    this.#device = device
  }

  reached(provider: string): void {
    this.#device.providerHealth({ provider, ok: true })
    this.#device.fault(VOICE_SERVICE_FAULT, undefined)
  }

  failed(failure: ProviderFailure): void {
    this.#device.providerHealth({
      provider: failure.provider,
      ok: false,
      reason: failure.reason,
      detail: oneLine(failure.detail),
    })
  }

  unreachable(failures: readonly ProviderFailure[]): void {
    for (const f of failures) this.failed(f)
    const each = failures.map((f) => `${f.provider} ${f.reason.replace('_', ' ')}`).join(', ')
    this.#device.fault(VOICE_SERVICE_FAULT, `no voice service can be reached (${each || 'none'})`)
  }
}

/**
 * The error's words on one line, short enough for a status (the wire takes 300 characters), with
 * anything shaped like a credential taken out: the status is retained on the broker, and though
 * the adapters redact their keys, a vendor's message quoting a URL or a header must not reach it.
 */
function oneLine(text: string): string {
  const line = text
    .replace(/([?&](?:key|access_token|api_key)=)[^&\s'"]+/gi, '$1[redacted]')
    .replace(/\b(Bearer\s+)\S+/gi, '$1[redacted]')
    .replace(/\bsk-[A-Za-z0-9_-]{8,}/g, '[redacted]')
    .replace(/\s+/g, ' ')
    .trim()
  return line.length > 200 ? `${line.slice(0, 199)}…` : line
}
