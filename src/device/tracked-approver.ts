import type { Approver } from '../ports/approver.js'
import type { DeviceState } from './device-state.js'

/** The approver, with each request counted as pending in the device's state until it settles. */
export function trackedApprover(inner: Approver, device: DeviceState): Approver {
  return {
    get audience() {
      return inner.audience
    },
    ...(inner.unavailable && { unavailable: () => inner.unavailable?.() }),
    async request(approval, signal) {
      device.approval(approval.id, true)
      try {
        return await inner.request(approval, signal)
      } finally {
        device.approval(approval.id, false)
      }
    },
  }
}
