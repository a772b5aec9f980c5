// The package ships no types: an Emscripten factory resolving to the module with RNNoise's exports.
declare module '@echogarden/rnnoise-wasm' {
  const createRnnoise: (moduleArg?: object) => Promise<unknown>
  export default createRnnoise
}
