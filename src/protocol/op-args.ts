import type { z } from 'zod'
import { NocturnError } from '../core/errors.js'

/** A phone request's `args`, as its operation's schema reads them; anything else is refused. */
export function args<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value)
  if (!r.success) throw badRequest('args: not what this operation takes')
  return r.data
}

export function badRequest(message: string): NocturnError {
  return new NocturnError('NOC_ERR_BAD_REQUEST', message)
}
