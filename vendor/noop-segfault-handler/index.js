'use strict'
// naudiodon calls registerHandler('crash.log') when loaded. Doing nothing keeps V8's own SIGSEGV
// handling, which turns WebAssembly out-of-bounds accesses into ordinary exceptions.
exports.registerHandler = function registerHandler() {}
exports.causeSegfault = function causeSegfault() {}
