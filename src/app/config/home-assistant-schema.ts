import { z } from 'zod'

const override = z.enum(['critical', 'one-shot'])
/** The keys of each override table, with what a right one looks like (zod's own message names no fix). */
const KEYS = {
  domains: [/^[a-z_]+$/, 'a domain, e.g. "lock"'],
  deviceClasses: [/^[a-z_]+\.[a-z_]+$/, 'a domain and device class, e.g. "cover.garage"'],
  entities: [/^[a-z_]+\.[a-z0-9_]+$/, 'an entity id, e.g. "lock.front_door"'],
} as const

/**
 * `homeAssistant`: the household's Home Assistant, whose exposed devices the speaker controls
 * (docs/home-assistant.md, "Control"). The access token is a secret like the API key: it is read
 * from NOCTURN_HA_TOKEN (or NOCTURN_HA_TOKEN_FILE), the credential `ha-token`, or `tokenFile` —
 * never from this file.
 */
export const homeAssistantSchema = z
  .strictObject({
    /** HA's base URL, e.g. "http://homeassistant.local:8123". */
    url: z
      .string()
      .regex(
        /^https?:\/\/[^\s/?#]+\/?$/,
        'the base URL of Home Assistant, e.g. "http://homeassistant.local:8123" (no path)',
      ),
    /** Refused when written here; filled from the environment, a credential or `tokenFile`. */
    token: z.string().optional(),
    tokenFile: z.string().min(1).optional(),
    /** This speaker's area in HA (name or id): a request that names no area means this one. */
    area: z.string().min(1).optional(),
    /** How often the tool list and the entities are read again (HA sends no change notice). */
    refreshMinutes: z.number().positive().max(1440).default(10),
    /** How long an approved action's state change may take before the model hears "not confirmed". */
    confirmSeconds: z.number().positive().max(600).default(15),
    /** One request's limit (HA's own is 60 s). */
    timeoutSeconds: z.number().positive().max(60).default(20),
    /** What counts as critical beyond the defaults, or less: most specific wins. */
    critical: z
      .strictObject({
        domains: z.record(z.string(), override).default({}),
        deviceClasses: z.record(z.string(), override).default({}),
        entities: z.record(z.string(), override).default({}),
      })
      .default({ domains: {}, deviceClasses: {}, entities: {} }),
    /** Scripts that may run without a phone's yes, by entity id ("script.movie_night"). */
    safeScripts: z
      .array(
        z.string().regex(/^script\.[a-z0-9_]+$/, 'a script entity id, e.g. "script.movie_night"'),
      )
      .default([]),
  })
  .superRefine((h, ctx) => {
    for (const [table, [pattern, want]] of Object.entries(KEYS)) {
      for (const key of Object.keys(h.critical[table as keyof typeof KEYS])) {
        if (!pattern.test(key)) {
          ctx.addIssue({
            code: 'custom',
            path: ['critical', table, key],
            message: `"${key}" is not ${want}`,
          })
        }
      }
    }
    if (h.token !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['token'],
        message:
          'keep the access token out of the config file: set NOCTURN_HA_TOKEN, the credential "ha-token", or homeAssistant.tokenFile',
      })
    }
  })
