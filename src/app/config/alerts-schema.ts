import { z } from 'zod'

/**
 * `alerts`: how an approval reaches a phone that is not looking at the app (docs/phone-app.md,
 * "When the app is closed"). Web Push carries the signed request itself and needs the app on
 * HTTPS; ntfy and Home Assistant carry only a sentence and a link, no authority, and are off unless
 * configured.
 */
const webPushSchema = z.strictObject({
  /** false: no subscription is taken and nothing is pushed. */
  enabled: z.boolean().default(true),
  /**
   * The VAPID contact (RFC 8292 `sub`): a `mailto:` or `https:` address a push service's operator
   * can reach the household at; the app's own address if unset.
   */
  subject: z
    .string()
    .regex(/^(mailto:[^\s@]+@[^\s@]+|https:\/\/\S+)$/, 'a mailto: address or an https:// URL')
    .optional(),
  /** The device's VAPID key pair (made at the first start, mode 0600); beside phonesDir if unset. */
  keyFile: z.string().min(1).optional(),
})

const ntfySchema = z.strictObject({
  /** The ntfy server: the public one or the household's own, e.g. "https://ntfy.sh". */
  server: z.url({ protocol: /^https?$/ }),
  /** The topic; anyone who knows its name can read it, so make it hard to guess. */
  topic: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only, at most 64'),
  /** An access token for a protected topic; better in `tokenFile`, NOCTURN_NTFY_TOKEN or a credential. */
  token: z.string().min(1).optional(),
  tokenFile: z.string().min(1).optional(),
})

export const alertsSchema = z.strictObject({
  webPush: webPushSchema.default(webPushSchema.parse({})),
  ntfy: ntfySchema.optional(),
  /** An alert on `…/home-assistant/alert` for an automation (docs/home-assistant.md); needs mqtt. */
  homeAssistant: z.boolean().default(false),
})
