import type { Check } from './check.js'
import type { DeviceDoctorContext } from './device-context.js'

/** The oldest Node Nocturn runs on: the dependencies' floor (better-sqlite3, @google/genai, aedes). */
const MIN_NODE_MAJOR = 20

/** How to get a supported Node, per Raspberry Pi OS release (the README's step 1 says the same). */
const NODE_FIX =
  'Raspberry Pi OS trixie: sudo apt install nodejs npm (Node 20). Bookworm ships Node 18: install Node 22 from NodeSource (see README step 1), or the official linux-arm64 tarball'

export const nodeCheck: Check<DeviceDoctorContext> = {
  name: 'node',
  async run(ctx) {
    const version = ctx.nodeVersion ?? process.versions.node
    const major = Number(version.split('.')[0])
    if (major >= MIN_NODE_MAJOR)
      return { status: 'ok', summary: `Node ${version}`, data: { version } }
    return {
      status: 'fail',
      summary: `Node ${version} is too old: Nocturn needs Node ${MIN_NODE_MAJOR} or later`,
      details: [`fix: ${NODE_FIX}`],
      data: { version, needed: MIN_NODE_MAJOR },
    }
  },
}
