import mqtt from 'mqtt'
import { type BrokerCredentials, clientOptions } from './client-options.js'

export interface BrokerProbeOptions extends BrokerCredentials {
  readonly url: string
  readonly timeoutMs?: number
}

export type BrokerProbe =
  | { readonly ok: true; readonly ms: number }
  | {
      readonly ok: false
      readonly ms: number
      /**
       * auth: the broker answered and refused these credentials; unreachable: nothing answers;
       * tls: the TLS handshake failed; timeout: no answer in time; refused: another CONNACK code.
       */
      readonly reason: 'auth' | 'unreachable' | 'tls' | 'timeout' | 'refused'
      /** What the broker or the socket said; never holds the password. */
      readonly message: string
    }

/**
 * One connection attempt, no retries, then a clean goodbye: is the broker reachable and does it
 * accept these credentials? For `nocturn doctor`; the appliance itself uses MqttConnection.
 */
export function probeBroker(o: BrokerProbeOptions): Promise<BrokerProbe> {
  const started = Date.now()
  const timeoutMs = o.timeoutMs ?? 4000
  const opts = clientOptions(o, timeoutMs)
  return new Promise((resolve) => {
    let done = false
    const client = mqtt.connect(o.url, opts)
    const finish = (r: BrokerProbe) => {
      if (done) return
      done = true
      clearTimeout(timer)
      client.end(true, {}, () => resolve(r))
    }
    const fail = (
      reason: 'auth' | 'unreachable' | 'tls' | 'timeout' | 'refused',
      message: string,
    ) =>
      finish({ ok: false, ms: Date.now() - started, reason, message: scrub(message, o.password) })
    const timer = setTimeout(
      () => fail('timeout', `no answer within ${timeoutMs} ms`),
      timeoutMs + 500,
    )
    client.on('connect', () => finish({ ok: true, ms: Date.now() - started }))
    client.on('error', (err: Error & { code?: string | number }) => {
      const code = err.code
      if (code === 4 || code === 5 || code === 134 || code === 135) return fail('auth', err.message)
      if (typeof code === 'number') return fail('refused', err.message)
      if (
        code === 'ECONNREFUSED' ||
        code === 'EHOSTUNREACH' ||
        code === 'ENOTFOUND' ||
        code === 'EAI_AGAIN' ||
        code === 'ENETUNREACH'
      ) {
        return fail('unreachable', err.message)
      }
      if (
        /certificate|self.signed|ssl|tls|handshake/i.test(err.message) ||
        /^(ERR_SSL|ERR_TLS|CERT_|DEPTH_ZERO|UNABLE_TO)/.test(String(code ?? ''))
      ) {
        return fail('tls', err.message)
      }
      fail('unreachable', err.message)
    })
    client.on('close', () => {
      // A refusal's error event may follow the close: give it a moment to say why.
      setTimeout(() => fail('unreachable', 'the connection closed before the broker answered'), 100)
    })
  })
}

function scrub(message: string, password: string | undefined): string {
  return password ? message.split(password).join('***') : message
}
