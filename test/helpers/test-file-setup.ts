// Vitest runs this before it collects each test file: the skips that test/helpers/system.ts
// decides while the file is collected are noted under this file's name.
import { expect } from 'vitest'
import { TEST_FILE_ENV } from './system.js'

process.env[TEST_FILE_ENV] = expect.getState().testPath ?? ''
