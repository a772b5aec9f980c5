import type { ConfigError } from '../config/errors.js'
import type { LoadedConfig } from '../config/load.js'

/** What the device checks look at: the configuration, if there is one, and the environment. */
export interface DeviceDoctorContext {
  readonly env: NodeJS.ProcessEnv
  /** The configuration in use; undefined when there is none or it is unusable. */
  readonly loaded: LoadedConfig | undefined
  /** Where the configuration was looked for (or given), if anywhere. */
  readonly configPath: string | undefined
  /** Why the configuration could not be used. */
  readonly configError: ConfigError | undefined
  /** How long the broker may take to accept a connection. */
  readonly brokerTimeoutMs?: number
  /** The Node version judged (default: the one running). */
  readonly nodeVersion?: string
  /** Where the firmware's config.txt may be (default: Pi OS bookworm's, then the older place). */
  readonly bootConfigPaths?: readonly string[]
}
