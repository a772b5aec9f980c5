import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

/**
 * The phone app's build: web/ → dist/web/ (index.html, one JS bundle, one CSS file, sw.js). Paths
 * are relative so the device may serve the app under any path; nothing is fetched from elsewhere.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  publicDir: 'public',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2020',
    modulePreload: false,
    reportCompressedSize: false,
  },
})
