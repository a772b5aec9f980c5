/**
 * SettingsStore: the device's few remembered settings (the volume), by name, so a restart keeps
 * what the household set. Values are small JSON-able strings; an unknown name reads undefined.
 */
export interface SettingsStore {
  getSetting(name: string): string | undefined
  setSetting(name: string, value: string, at: number): void
}
