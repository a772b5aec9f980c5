// The call context and what travels with it are declared with the tool in `types.ts` (they refer
// to each other); this module keeps the import path every caller already uses.
export type { CallContext, CallGate, Channel, PendingNotice } from './types.js'
