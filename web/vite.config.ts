import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
import { appIcons } from './app-icons.js'
import { httpsSteps } from './https-steps.js'
import { serviceWorker } from './service-worker-build.js'

/**
 * The phone app's build: web/ → dist/web/ (index.html, one JS bundle, one CSS file, the icons and
 * the web app manifest from app-icons.ts, sw.js, the service worker: service-worker-build.ts, and https-setup.html from docs/phone-app.md). Paths
 * are relative so the device may serve the app under any path; nothing is fetched from elsewhere.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  publicDir: 'public',
  logLevel: 'warn',
  plugins: [appIcons(), httpsSteps(), serviceWorker()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2020',
    modulePreload: false,
    reportCompressedSize: false,
  },
})
