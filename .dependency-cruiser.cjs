// The layering of src/ (docs/design.md §1, docs/architecture.md). `npm test` checks it through
// test/architecture.test.ts; `npm run deps` prints the same verdict for a person.

/** Node built-ins that do I/O or start processes: none of them belongs in the core or a port. */
const IO_BUILTINS = [
  'fs',
  'fs/promises',
  'child_process',
  'net',
  'dgram',
  'dns',
  'http',
  'http2',
  'https',
  'tls',
  'worker_threads',
  'cluster',
  'os',
  'process',
  'readline',
  'repl',
  'tty',
  'v8',
  'vm',
  'inspector',
  'perf_hooks',
]
const IO_PATH = `^(node:)?(${IO_BUILTINS.join('|')})$`

/**
 * Adapter support: folders under adapters/ that implement no port and that every adapter may
 * import (one supervised child process for the ALSA and gpiod adapters; what the two live
 * providers' adapters share, which may not import each other). Kept under adapters/ so the core's
 * fences (no adapter, no I/O) cover them too; `adapter-support-vendor-free` keeps them free of
 * vendors and of any adapter.
 */
const ADAPTER_SUPPORT = '^src/adapters/(child-process|live-support)/'

/** The files that are the offline run and the developer's fake Live service, not the appliance. */
const OFFLINE = '^src/app/(offline-run|offline/[^/]+|phone-demo|household-scene|commands/fake-live)\\.ts$'
// app/ modules that may import an adapter: the composition modules and those that choose a backend.
const APP_COMPOSERS = [
  '^src/app/(compose|commands|doctor|offline)/',
  '^src/app/(appliance|audio|panel-factory|panel-board|phone-app|phone-demo|wake-detector)\\.ts$',
]

/**
 * The phone side of protocol v1 (src/protocol/phone-side.ts) and everything it reaches: a closed
 * set, so the rule on it holds for every file the app bundles from src/.
 */
const PHONE_SIDE =
  '^src/(protocol/(phone-side|phone-crypto|forms|topics|limits|sensitivity)|core/canonical-json)\\.ts$'

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  required: [
    {
      name: 'phones-share-the-protocol',
      comment:
        'The app and the terminal phone believe and sign through one module (issue 27): each of their protocol ends imports it rather than a copy.',
      severity: 'error',
      module: { path: '^(web/src/speaker-link|src/phone/(client|conversations))\\.ts$' },
      to: { path: '^src/protocol/phone-side\\.ts$' },
    },
  ],
  forbidden: [
    {
      name: 'no-cycles',
      comment:
        'A cycle, even of types only, means two modules are one idea in two files: move what both need into a third.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-no-vendor',
      comment:
        'The core, the ports and the two drivers import no vendor package: Gemini, ALSA, MQTT and GPIO live behind ports.',
      severity: 'error',
      from: { path: '^src/(core|ports|turn|voice|device|home)/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'core-no-io',
      comment:
        'The core, the ports and the two drivers do no I/O of their own (no files, processes, sockets): adapters do.',
      severity: 'error',
      from: { path: '^src/(core|ports|turn|voice|device|home)/' },
      to: { dependencyTypes: ['core'], path: IO_PATH },
    },
    {
      name: 'core-no-adapter-or-app',
      comment: 'Ports are implemented by adapters and wired in app/; the core never reaches for either.',
      severity: 'error',
      from: { path: '^src/(core|ports|turn|voice|device|home)/' },
      to: { path: '^src/(adapters|app)/' },
    },
    {
      name: 'ports-only-core',
      comment:
        'A port is an interface with its contract; it may lean on core types, other ports and the wire forms of the protocol (a message, an operation or a limit the device and the phones both read is declared once, with the protocol), nothing else.',
      severity: 'error',
      from: { path: '^src/ports/' },
      to: { path: '^src/', pathNot: '^src/(ports|core)/|^src/protocol/(phone-side|sensitivity|limits|grant-ops|conversations)\\.ts$' },
    },
    {
      name: 'adapter-not-adapter',
      comment: 'An adapter imports no other adapter: two adapters meet only where app/ wires them.',
      severity: 'error',
      from: { path: '^src/adapters/([^/]+)/' },
      to: { path: '^src/adapters/', pathNot: ['^src/adapters/$1/', ADAPTER_SUPPORT] },
    },
    {
      name: 'adapter-support-vendor-free',
      comment:
        'What adapters share (child-process/, live-support/) imports no vendor package and no adapter: it is the common ground two adapters may stand on, so it cannot carry either one in.',
      severity: 'error',
      from: { path: ADAPTER_SUPPORT },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
      },
    },
    {
      name: 'adapter-support-no-adapter',
      comment: 'A support folder imports no adapter, only the core, the ports and itself.',
      severity: 'error',
      from: { path: '^src/adapters/(child-process|live-support)/' },
      to: { path: '^src/adapters/', pathNot: '^src/adapters/$1/' },
    },
    {
      name: 'app-adapters-only-in-composition',
      comment:
        'In app/, adapters are imported by the modules that compose them (compose/, the provider registry among them; audio.ts; the panel factory and board probes; the phone app and demo; the wake detector) and by the commands, the doctor and the offline run — nowhere else, so a new feature is wired in one place.',
      severity: 'error',
      from: { path: '^src/app/', pathNot: APP_COMPOSERS },
      to: { path: '^src/adapters/' },
    },
    {
      name: 'appliance-composes-through-compose',
      comment:
        'appliance.ts keeps the order of start: it names adapter types and takes the real clock, and composes every adapter through compose/.',
      severity: 'error',
      from: { path: '^src/app/appliance\\.ts$' },
      to: {
        path: '^src/adapters/',
        pathNot: '^src/adapters/clock/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'testing-only-offline',
      comment:
        'src/testing/ (scripted fakes) is for tests, bench/ and the offline run; the appliance never imports it.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/testing/', OFFLINE] },
      to: { path: '^src/testing/' },
    },
    {
      name: 'appliance-never-reaches-testing',
      comment: '`nocturn run` must not load a fake, even through a chain of imports.',
      severity: 'error',
      from: { path: '^src/app/(appliance|commands/run)\\.ts$' },
      to: { path: '^src/testing/', reachable: true },
    },
    {
      name: 'model-thread-without-the-weights',
      comment:
        "The runtime's thread is sent the companion head and only scores it: parsing the shipped weights would cost its start ~7 ms (docs/wake-word.md).",
      severity: 'error',
      from: { path: '^src/adapters/openwakeword/model-worker\\.ts$' },
      to: { path: '^src/adapters/openwakeword/(companions\\.ts|hey-jarvis-companion\\.json)$', reachable: true },
    },
    {
      name: 'phone-side-browser-safe',
      comment:
        'The phone side of the protocol runs in the app, its service worker and the terminal phone: its files import only each other and @noble/hashes (no node: module, no zod-sized schema library).',
      severity: 'error',
      from: { path: PHONE_SIDE },
      to: { pathNot: [PHONE_SIDE, '^node_modules/@noble/hashes/'] },
    },
    {
      name: 'web-only-phone-side',
      comment:
        'The phone app runs in a browser: of src/ it imports only the phone side (browser-safe, above), and no Node module.',
      severity: 'error',
      from: { path: '^web/src/' },
      to: { path: '^src/', pathNot: PHONE_SIDE },
    },
    {
      name: 'web-no-node',
      comment: 'The phone app runs in a browser: no Node module.',
      severity: 'error',
      from: { path: '^web/src/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'phones-no-own-crypto',
      comment:
        "A phone verifies and signs through src/protocol/phone-side.ts: hashing its own way (node:crypto, @noble/hashes, the device's crypto.ts) would be a second phone side to keep in step.",
      severity: 'error',
      from: { path: '^(web/src|src/phone)/' },
      to: { path: ['^node_modules/@noble/hashes/', '^(node:)?crypto$', '^src/protocol/crypto\\.ts$'] },
    },
    {
      name: 'phone-no-adapter',
      comment:
        'The terminal phone (src/phone/) speaks the protocol through a port (ports/phone-link.ts): the MQTT link it is handed is chosen by its program (app/commands/phone.ts, the offline house, the tests), so the phone side never reaches for an adapter.',
      severity: 'error',
      from: { path: '^src/phone/' },
      to: { path: '^src/(adapters|app)/' },
    },
    {
      name: 'config-not-compose',
      comment:
        'app/config/ reads and checks the configuration before anything is composed: it may not reach up into compose/ (a provider\'s name and key help are config/provider-names.ts\'s, its models the registry\'s).',
      severity: 'error',
      from: { path: '^src/app/config/' },
      to: { path: '^src/app/compose/' },
    },
    {
      name: 'adapters-not-device-state',
      comment:
        'An adapter sees the device through a port (ports/speaker-settings.ts, the approval desk\'s listeners), never the concrete DeviceState class. Not yet: the MQTT entry (adapters/mqtt/index.ts), which hands the state to the Home Assistant bridge, and that bridge, which follows its whole snapshot — the Home Assistant branch moves them to a port.',
      severity: 'error',
      from: {
        path: '^src/adapters/',
        pathNot: '^src/adapters/mqtt/(index\\.ts$|home-assistant/)',
      },
      to: { path: '^src/device/' },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import that does not resolve would hide an edge from every rule above.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are edges too: the cycle rule must see them.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.d.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    // Dynamic `import()` with a literal path is an edge like any other (commands, optional adapters).
  },
}
