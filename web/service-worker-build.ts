import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'vite'

/**
 * The service worker is an entry of its own (web/src/sw.ts): built after the app, into the same
 * folder, as one classic script `sw.js` at the app's root — so its scope is the whole app, its name
 * never changes (a browser finds an update by fetching that same URL) and it runs in every browser
 * that has service workers, also those without module workers. It shares the app's modules (the
 * phone side, the key store) by bundling them in, not by importing the app's chunks.
 */
export function serviceWorker(): Plugin {
  let outDir = ''
  return {
    name: 'nocturn-service-worker',
    apply: 'build',
    configResolved(config) {
      outDir = config.build.outDir
    },
    async closeBundle() {
      await build({
        configFile: false,
        root: fileURLToPath(new URL('.', import.meta.url)),
        logLevel: 'warn',
        publicDir: false,
        build: {
          outDir,
          emptyOutDir: false,
          target: 'es2020',
          reportCompressedSize: false,
          copyPublicDir: false,
          rollupOptions: {
            input: fileURLToPath(new URL('./src/sw.ts', import.meta.url)),
            output: { format: 'iife', entryFileNames: 'sw.js' },
          },
        },
      })
    },
  }
}
