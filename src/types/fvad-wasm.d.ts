// The package ships no types: an Emscripten factory resolving to the module with libfvad's exports.
declare module '@echogarden/fvad-wasm' {
  const createFvad: (moduleArg?: object) => Promise<unknown>
  export default createFvad
}
