#!/usr/bin/env node
// The installed command: runs the compiled CLI (`npm run build` first).
import '../dist/app/cli.js'
