import type { Alerter, ApprovalAlert } from '../../../ports/alert.js'
import type { Publisher } from '../../../ports/publisher.js'

/**
 * Approval alerts on Home Assistant's side of the broker (docs/home-assistant.md, "Approval
 * alerts"): one JSON message per request and per ending on `…/home-assistant/alert`, never
 * retained (an alert for a request long gone must not wake anyone later), for an automation to
 * send to the companion app with a link that opens the app at the card. No key, no MAC, no
 * decision: whoever reads the topic learns that something is asked, and can answer nothing.
 */
export class HomeAssistantAlerts implements Alerter {
  readonly name = 'home-assistant'
  readonly #publisher: Publisher
  readonly #topic: string

  constructor(publisher: Publisher, topic: string) {
    this.#publisher = publisher
    this.#topic = topic
  }

  alert(a: ApprovalAlert): Promise<void> {
    const payload = {
      kind: a.kind,
      id: a.id,
      device: a.device,
      ...(a.kind === 'request' && {
        title: `${a.device} asks`,
        message: a.action ?? 'The speaker asks for a yes.',
        tool: a.tool,
        critical: a.critical === true,
        ...(a.askedBy !== undefined && { asked_by: a.askedBy }),
        expires_at: a.expiresAt,
      }),
      ...(a.kind === 'ended' && { state: a.state }),
      url: a.url,
    }
    return this.#publisher.publish(this.#topic, JSON.stringify(payload), { qos: 1, retain: false })
  }
}
