// Preloaded with `node --import` by tests that check what a process loads: every module URL the
// ESM loader loads (our modules, and each package entry, CommonJS ones included) is appended to
// the file named by NOCTURN_LOAD_LOG as it is loaded, one per line: `<Date.now()> <url>`.
import { register } from 'node:module'

register('./load-recorder-hooks.mjs', import.meta.url, {
  data: { log: process.env.NOCTURN_LOAD_LOG },
})
