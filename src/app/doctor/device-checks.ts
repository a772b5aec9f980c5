import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { realClock } from '../../adapters/clock/real-clock.js'
import { probeBroker, type RightResult, writeProbes } from '../../adapters/mqtt/probe.js'
import { topicsFor } from '../../protocol/index.js'
import { probePcms } from '../config/check-pcms.js'
import { checkPanel } from '../panel-check.js'
import { PhoneKeyStore } from '../phone-keys.js'
import type { Check, CheckResult, CheckStatus } from './check.js'
import type { DeviceDoctorContext } from './device-context.js'
import { nodeCheck } from './node-check.js'
import { phoneAppCheck } from './phone-app-check.js'
import { spiCheck } from './spi-check.js'
import { wakeCheck } from './wake-check.js'

const NO_CONFIG = 'no configuration (--config <path>, NOCTURN_CONFIG or /etc/nocturn/config.json)'

function noConfig(ctx: DeviceDoctorContext): CheckResult {
  return {
    status: 'skip',
    summary: ctx.configError ? 'the configuration is unusable (see config)' : NO_CONFIG,
  }
}

const configCheck: Check<DeviceDoctorContext> = {
  name: 'config',
  async run(ctx) {
    if (ctx.configError) {
      return {
        status: 'fail',
        summary: `${ctx.configPath ?? 'the configuration'} cannot be used (${ctx.configError.problems.length} ${ctx.configError.problems.length === 1 ? 'problem' : 'problems'})`,
        details: ctx.configError.problems,
        data: { path: ctx.configPath, problems: ctx.configError.problems },
      }
    }
    if (!ctx.loaded) {
      return {
        status: 'skip',
        summary: `${NO_CONFIG}; reading the Gemini settings from the environment`,
        details: ['create one with: nocturn config --example > /etc/nocturn/config.json'],
      }
    }
    const s = ctx.loaded.secretSources
    return {
      status: 'ok',
      summary: `${ctx.loaded.path} is valid`,
      details: [`API key from: ${s.apiKey}; MQTT password from: ${s.mqttPassword}`],
      data: { path: ctx.loaded.path, secretSources: s },
    }
  },
}

const audioCheck: Check<DeviceDoctorContext> = {
  name: 'audio',
  async run(ctx) {
    if (!ctx.loaded) return noConfig(ctx)
    const audio = ctx.loaded.config.audio
    if (audio.backend === 'wav') {
      return {
        status: 'skip',
        summary: `audio.backend is "wav": no sound card used (microphone ${audio.inputWav ?? '?'}, speaker ${audio.outputWav ?? 'discarded'})`,
      }
    }
    if (audio.backend === 'portaudio') {
      return {
        status: 'skip',
        summary:
          'audio.backend is "portaudio": not probed here; "nocturn devices --backend portaudio" lists its devices',
      }
    }
    const probes = await probePcms(ctx.loaded.config, ctx.env)
    const lines: string[] = []
    let status: CheckStatus = 'ok'
    const worse = (s: CheckStatus) => {
      if (s === 'fail' || (s === 'warn' && status === 'ok')) status = s
    }
    for (const p of probes) {
      const what = p.key === 'audio.capturePcm' ? 'capture' : 'playback'
      switch (p.status) {
        case 'ok':
          lines.push(`${p.key} "${p.pcm}": opens for ${what}`)
          break
        case 'missing':
          worse('fail')
          lines.push(
            `${p.key} "${p.pcm}": ALSA has no such PCM${p.card ? ` (no sound card "${p.card}")` : ''} — list the names with "nocturn devices", define it in /etc/asound.conf (hardware/audio.md, hardware/asound.conf.example) and set ${p.key}`,
          )
          break
        case 'busy':
          worse('warn')
          lines.push(
            `${p.key} "${p.pcm}": busy — another program holds it (the service? "sudo systemctl stop nocturn", then run doctor again)`,
          )
          break
        case 'denied':
          worse('fail')
          lines.push(
            `${p.key} "${p.pcm}": permission denied — add the user to the audio group (sudo usermod -aG audio nocturn) and log in again`,
          )
          break
        case 'no-tool':
          worse('fail')
          lines.push(
            `${p.key}: ${what === 'capture' ? 'arecord' : 'aplay'} is not installed — sudo apt install alsa-utils`,
          )
          break
        default:
          worse('fail')
          lines.push(
            `${p.key} "${p.pcm}": does not open (${p.said ?? 'no reason given'}) — check it by hand with arecord/aplay (hardware/audio.md) and "nocturn devices"`,
          )
      }
    }
    const okCount = probes.filter((p) => p.status === 'ok').length
    return {
      status,
      summary:
        status === 'ok'
          ? `capture "${audio.capturePcm}" and playback "${audio.playbackPcm}" open`
          : `${okCount} of ${probes.length} PCMs open`,
      details: lines,
      data: probes,
    }
  },
}

const panelCheck: Check<DeviceDoctorContext> = {
  name: 'panel',
  async run(ctx) {
    const panel = ctx.loaded?.panel
    const r = await checkPanel({ ...(panel && { panel }), env: ctx.env })
    const items = r.checks
    const status: CheckStatus = items.some((c) => c.status === 'fail')
      ? 'fail'
      : items.some((c) => c.status === 'warn')
        ? 'warn'
        : 'ok'
    const details = items.flatMap((c) => [
      `${c.status === 'ok' ? '' : `${c.status}: `}${c.name}: ${c.detail}`,
      ...(c.fix && c.status !== 'ok' ? [`  fix: ${c.fix}`] : []),
    ])
    const configured = panel
      ? `panel.backend "${panel.backend}"${panel.button ? `, button ${panel.button}` : ''}${panel.led ? `, LED ${panel.led}` : ''}`
      : 'no panel configured'
    // Where the board has no GPIO at all and none is configured, there is nothing to fix.
    const quiet =
      status === 'warn' && (!panel || panel.backend === 'none' || panel.backend === 'terminal')
    return {
      status: quiet ? 'ok' : status,
      summary: `${configured}; this board needs "${r.recommended}"`,
      details,
      data: r,
    }
  },
}

const brokerCheck: Check<DeviceDoctorContext> = {
  name: 'broker',
  async run(ctx) {
    if (!ctx.loaded) return noConfig(ctx)
    const m = ctx.loaded.config.mqtt
    if (!m) {
      return {
        status: 'warn',
        summary:
          'not configured: approvals are asked on the terminal, or denied — set "mqtt" to approve on a phone',
      }
    }
    let tls: { ca?: Buffer; cert?: Buffer; key?: Buffer }
    try {
      tls = {
        ...(m.ca !== undefined && { ca: readFileSync(m.ca) }),
        ...(m.cert !== undefined && { cert: readFileSync(m.cert) }),
        ...(m.key !== undefined && { key: readFileSync(m.key) }),
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException
      return {
        status: 'fail',
        summary: `cannot read the TLS file ${e.path ?? ''} (${e.code ?? 'error'})`,
        details: ['check mqtt.ca, mqtt.cert and mqtt.key, and that the nocturn user may read them'],
      }
    }
    const url = redact(m.url)
    const who = m.username ? `user "${m.username}"` : 'no user name'
    const p = await probeBroker({
      url: m.url,
      clientId: `nocturn-doctor-${m.deviceId}-${hostname()}-${process.pid}`.slice(0, 64),
      ...(m.username !== undefined && { username: m.username }),
      ...(m.password !== undefined && { password: m.password }),
      ...tls,
      clock: realClock(),
      timeoutMs: ctx.brokerTimeoutMs ?? 4000,
      rights: writeProbes(
        topicsFor(m.prefix, m.deviceId),
        ctx.loaded.config.homeActions.map((a) => a.topic),
      ),
    })
    const data = {
      url,
      username: m.username,
      tls: m.url.startsWith('mqtts') || m.url.startsWith('wss'),
      ...p,
    }
    if (p.ok) return rightsResult(`${url}: reachable, ${who} accepted (${p.ms} ms)`, p, data)
    switch (p.reason) {
      case 'auth':
        return {
          status: 'fail',
          summary: `${url}: reachable, but the broker refused ${who} (${p.message.replace(/^Connection refused: /, '')})`,
          details: [
            `fix: check mqtt.username and the password (from: ${ctx.loaded.secretSources.mqttPassword}) against the broker's password file (mosquitto_passwd)`,
          ],
          data,
        }
      case 'tls':
        return {
          status: 'fail',
          summary: `${url}: the TLS handshake failed (${p.message})`,
          details: [
            'fix: set mqtt.ca to the CA that signed the broker certificate, and check the host name in mqtt.url matches it',
          ],
          data,
        }
      case 'timeout':
        return {
          status: 'fail',
          summary: `${url}: no answer within a few seconds`,
          details: [
            'fix: check the host and port in mqtt.url, and that a firewall lets the port through',
          ],
          data,
        }
      case 'refused':
        return {
          status: 'fail',
          summary: `${url}: the broker refused the connection (${p.message})`,
          details: ['fix: read the broker log (journalctl -u mosquitto)'],
          data,
        }
      default:
        return {
          status: 'fail',
          summary: `${url}: unreachable (${p.message})`,
          details: [
            'fix: is the broker running (systemctl status mosquitto)? check the host and port in mqtt.url',
          ],
          data,
        }
    }
  },
}

/**
 * What the write probes found: a missing right is a failure naming the topic and the ACL line that
 * gives it; over MQTT 3.1.1 nothing can be told (a refused publish looks delivered), a warning.
 */
function rightsResult(
  reachable: string,
  p: { protocolVersion: 4 | 5; rights: readonly RightResult[] },
  data: Record<string, unknown>,
): CheckResult {
  const missing = p.rights.filter((r) => r.result === 'refused')
  if (missing.length > 0) {
    return {
      status: 'fail',
      summary: `${reachable}, but its ACL forbids writing ${missing.map((r) => r.label).join(', ')}`,
      details: missing.map(
        (r) =>
          `missing right: write ${r.needed} (${r.reason ?? 'refused'}) — add "topic write ${r.needed.replace(/\/\+$/, '')}/#" under the device's user in the broker's ACL (docs/broker.md)`,
      ),
      data,
    }
  }
  if (p.protocolVersion === 4 && p.rights.length > 0) {
    return {
      status: 'warn',
      summary: `${reachable}; it speaks only MQTT 3.1.1, so write rights cannot be checked (a forbidden publish is dropped unseen)`,
      data,
    }
  }
  return {
    status: 'ok',
    summary: `${reachable}; may write ${p.rights.length} topics it needs`,
    data,
  }
}

const phonesCheck: Check<DeviceDoctorContext> = {
  name: 'phones',
  async run(ctx) {
    if (!ctx.loaded) return noConfig(ctx)
    const dir = ctx.loaded.config.phonesDir
    let phones: ReturnType<PhoneKeyStore['list']>
    try {
      phones = new PhoneKeyStore(dir).list()
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error'
      return {
        status: 'fail',
        summary: `cannot read ${dir} (${code})`,
        details: ['fix: run doctor as the nocturn user (sudo -u nocturn nocturn doctor)'],
      }
    }
    const data = { dir, phones: phones.map((p) => ({ phone: p.phone, name: p.name })) }
    if (phones.length === 0) {
      return {
        status: 'warn',
        summary: 'no phone paired: nobody can approve an action — run "nocturn pair"',
        data,
      }
    }
    return {
      status: 'ok',
      summary: `${phones.length} paired: ${phones.map((p) => p.name).join(', ')}`,
      data,
    }
  },
}

export const deviceChecks = [
  nodeCheck,
  configCheck,
  audioCheck,
  panelCheck,
  spiCheck,
  brokerCheck,
  phonesCheck,
  phoneAppCheck,
  wakeCheck,
]

/** The URL without a user:password part. */
function redact(url: string): string {
  return url.replace(/\/\/[^/@]*@/, '//')
}
