export { FakeRealtimeServer } from './server.js'
