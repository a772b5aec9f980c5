import { existsSync, readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { DEFAULT_APP_ROOT, phoneAppUrl } from '../phone-app.js'
import { portHolder } from '../port-holder.js'
import type { Check, CheckResult } from './check.js'
import type { DeviceDoctorContext } from './device-context.js'

/**
 * Is the phone app served, or can it be? Built, its TLS files readable, and its port either
 * answering as this device's app (nocturn run is up) or free for it (nocturn run will take it).
 */
export const phoneAppCheck: Check<DeviceDoctorContext> = {
  name: 'phone app',
  async run(ctx): Promise<CheckResult> {
    if (!ctx.loaded) return { status: 'skip', summary: 'no configuration' }
    const c = ctx.loaded.config
    const p = c.phoneApp
    if (!p.enabled) return { status: 'skip', summary: 'off (phoneApp.enabled is false)' }
    if (!c.mqtt) return { status: 'skip', summary: 'not served: no broker (mqtt) configured' }
    const root = p.root ?? DEFAULT_APP_ROOT
    const data = { port: p.port, root, url: phoneAppUrl(c) }
    for (const f of [p.tlsCertFile, p.tlsKeyFile]) {
      if (f === undefined) continue
      try {
        readFileSync(f)
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? 'error'
        return { status: 'fail', summary: `cannot read ${f} (${code})`, data }
      }
    }
    const built = existsSync(join(root, 'index.html'))
    const notBuilt = built ? [] : [`${root} has no index.html: run "npm run build"`]
    const tls = p.tlsCertFile !== undefined
    const answer = await probe(p.host ?? '127.0.0.1', p.port, tls)
    if (answer !== undefined) {
      const ours = (answer as { device?: unknown }).device === c.mqtt.deviceId
      if (ours) {
        return {
          status: built ? 'ok' : 'warn',
          summary: `served on port ${p.port}: phones open ${data.url}`,
          details: notBuilt,
          data,
        }
      }
    }
    const free = await portFree(p.port, p.host)
    if (free === true) {
      return {
        status: built ? 'ok' : 'warn',
        summary: `port ${p.port} is free: served at ${data.url} once nocturn runs`,
        details: notBuilt,
        data,
      }
    }
    const holder = free === 'EACCES' ? undefined : portHolder(p.port)
    return {
      status: 'fail',
      summary: `port ${p.port} is ${free === 'EACCES' ? 'not allowed for this user' : `taken by ${holder ?? 'another program'}`}`,
      details: [
        `fix: set phoneApp.port to a free port${holder ? `, or stop ${holder}` : ''} (or phoneApp.enabled to false)`,
      ],
      data,
    }
  },
}

/** The port's /config.json, if something answers it with JSON within a second. */
function probe(host: string, port: number, tls: boolean): Promise<unknown> {
  return new Promise((resolve) => {
    const req = (tls ? httpsRequest : httpRequest)(
      {
        host,
        port,
        path: '/config.json',
        timeout: 1000,
        ...(tls && { rejectUnauthorized: false }),
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (d: Buffer) => chunks.push(d))
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString()))
          } catch {
            resolve(undefined)
          }
        })
      },
    )
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(undefined))
    req.end()
  })
}

/** true when the port can be bound, else the error code. */
function portFree(port: number, host: string | undefined): Promise<true | string> {
  return new Promise((resolve) => {
    const s = createServer()
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'))
    s.listen(port, host, () => s.close(() => resolve(true)))
  })
}
