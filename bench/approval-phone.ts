// The phone for approval.bench.ts, in its own process so the device's CPU figure counts the device
// alone: it approves every request it verifies, at once. The pairing comes on stdin as one JSON
// line (the key is a secret: never in argv); it prints "ready" once subscribed and leaves when
// stdin ends.
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { silentLogger } from '../src/core/logger.js'
import { PhoneClient } from '../src/phone/client.js'
import { testPhoneLink } from '../test/helpers/device-mqtt.js'

const lines = createInterface({ input: process.stdin })
const [line] = (await once(lines, 'line')) as [string]
const o = JSON.parse(line) as {
  broker: string
  device: string
  prefix: string
  phone: string
  key: string
  username: string
  password: string
}
const phone = new PhoneClient({
  link: testPhoneLink,
  pairing: {
    broker: o.broker,
    device: o.device,
    prefix: o.prefix,
    phone: o.phone,
    key: Buffer.from(o.key, 'hex'),
  },
  username: o.username,
  password: o.password,
  logger: silentLogger,
})
await phone.start()
phone.on((e) => {
  if (e.kind === 'pending') void phone.decide(e.request.id, 'approve', 'once')
})
process.stdout.write('ready\n')
lines.on('close', () => void phone.close().then(() => process.exit(0)))
