/**
 * Publisher: puts one message on a topic of the household's MQTT broker, e.g. a command to a
 * zigbee2mqtt device. Resolves when the broker has it (per `qos`); rejects when it cannot.
 */
export interface Publisher {
  publish(topic: string, payload: string | Uint8Array, opts: PublishOptions): Promise<void>
}

export interface PublishOptions {
  readonly qos: 0 | 1 | 2
  readonly retain: boolean
}
