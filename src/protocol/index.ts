export * from './crypto.js'
export * from './messages.js'
export * from './pairing-uri.js'
export * from './topics.js'
