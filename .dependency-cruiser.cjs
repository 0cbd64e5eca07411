// Architecture rules for rrscan, checked by `npm run lint` (dependency-cruiser).
//
// Dependencies flow one way, from the entry point down to the leaves:
//
//   L5  cli                         commands; the only one that may start the server
//   L4  server                      HTTP front (uWebSockets), DNSDB API v2 wire format
//   L3  auth | search | ingest | demo   use cases; independent of each other
//                                   (search/local is part of search; demo may use ingest)
//   L2  query | shard | render | clickhouse   parsing queries, reading/writing shards, output,
//                                   the ClickHouse client and schema; independent of each other
//   L1  model | dns                 data model; model may use dns, dns not model
//   L0  lib | errors | config       leaves; lib may use errors and config, nothing else
//
// A module imports from its own folder or from a lower layer only: never upwards,
// never sideways unless a rule below says so. Worker entry points (workers/*.ts)
// sit beside the tree: scan uses search/local and L2 and below, ingest uses ingest
// and below, compact uses shard and below. src never imports workers/, and no
// worker reaches the pools that start workers (lib/threads.ts). Each entry point
// adds its row to the table of worker calls (lib/workers.ts) by declaration
// merging, a type-only import of lib.
//
// Every rule matches paths by regex, so folders that do not exist yet (lib, model,
// render, search/local) are covered the moment they appear. A src folder that is in
// no layer is an error too (`to-/from-src-folder-in-no-layer`): add it to LAYERS below.

// Folder alternatives of each layer, as regex fragments under `src/`.
const L5 = ['cli'];
const L4 = ['server'];
const L3 = ['auth', 'search', 'ingest', 'demo'];
const L2 = ['query', 'shard', 'render', 'clickhouse'];
const L1 = ['model', 'dns'];
const L0 = ['lib', 'errors', 'config'];
const LAYERS = [...L5, ...L4, ...L3, ...L2, ...L1, ...L0];

/** Regex for modules in any of the given src folders (and their subfolders). */
const inSrc = (folders) => `^src/(${folders.join('|')})/`;

// Each import is reported once, by the rule that explains it best: the layer rules look only at
// imports of layered folders other than server; imports of server are `only-cli-imports-server`'s,
// imports of a folder in no layer are `to-src-folder-in-no-layer`'s.
const LAYERED_BUT_SERVER = inSrc(LAYERS.filter((f) => !L4.includes(f)));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Modules must not depend on themselves through a chain of imports, type-only imports included '
        + '(tsPreCompilationDeps). A cycle means two modules are really one: merge them or move the shared part down a layer.',
      from: {},
      to: { circular: true },
    },

    // ---- one-way flow between layers -------------------------------------------------------------------------

    {
      name: 'to-src-folder-in-no-layer',
      severity: 'error',
      comment:
        'Every folder under src/ belongs to a layer (see the table at the top of .dependency-cruiser.cjs). '
        + 'This module, or the one it imports, is in a folder that is in none: give the folder a layer or move the module.',
      from: { path: `^(workers/|${inSrc(LAYERS).slice(1)})` },
      to: { path: '^src/', pathNot: inSrc(LAYERS) },
    },
    {
      name: 'from-src-folder-in-no-layer',
      severity: 'error',
      comment: 'A module in a src/ folder that is in no layer imports from src/: give its folder a layer first.',
      from: { path: '^src/', pathNot: inSrc(LAYERS) },
      to: { path: '^src/' },
    },
    {
      name: 'L4-server-never-imports-cli',
      severity: 'error',
      comment: 'server (L4) is started by cli (L5); it must not import its caller.',
      from: { path: inSrc(L4) },
      to: { path: inSrc(L5) },
    },
    {
      name: 'server-never-imports-ingest',
      severity: 'error',
      comment:
        'The server answers searches over what ingest wrote; ingest is a command of its own, with metrics of its own '
        + '(ingest/live/live-metrics.ts). What both use (the metrics listener, the Prometheus helpers, the uWebSockets.js '
        + 'loader) sits in lib, so the server never needs to import ingest.',
      from: { path: inSrc(L4) },
      to: { path: inSrc(['ingest']) },
    },
    {
      name: 'only-cli-imports-server',
      severity: 'error',
      comment:
        'server is the top of the request path: only cli starts it. Search, auth, query... must not reach up into it '
        + '(e.g. for a writer or a type): move what they need down into their own layer or below.',
      from: { pathNot: `${inSrc([...L5, ...L4])}` },
      to: { path: inSrc(L4) },
    },
    {
      name: 'L3-auth-search-ingest-use-only-L2-and-below',
      severity: 'error',
      comment:
        'auth, search (with search/local) and ingest are independent use cases: each imports its own folder and '
        + 'L2 (query, shard, render), L1 (model, dns), L0 (lib, errors, config); never another L3 folder, server or cli.',
      from: { path: '^src/(auth|search|ingest)/' },
      to: { path: LAYERED_BUT_SERVER, pathNot: `^src/($1|${[...L2, ...L1, ...L0].join('|')})/` },
    },
    {
      name: 'search-tiers-never-import-each-other',
      severity: 'error',
      comment:
        'A data tier lives in search/<tier>/ and shares with its siblings only what sits in search/ itself (flex-patterns, '
        + 'flex-batch, sources, the paginator): a third tier must not have to read another tier to work. Nor may it import '
        + 'search/open-backend.ts, the one module of search/ that imports every tier (to open the one a server names): '
        + 'through it a tier would reach its siblings all the same.',
      from: { path: '^src/search/([^/]+)/' },
      to: { path: '^src/search/([^/]+/|open-backend\\.ts$)', pathNot: '^src/search/$1/' },
    },
    {
      name: 'L3-demo-uses-ingest-and-L2-and-below',
      severity: 'error',
      comment: 'demo generates observations in ingest\'s format: it may import ingest (the one allowed L3 sibling) and L2 and below.',
      from: { path: inSrc(['demo']) },
      to: { path: LAYERED_BUT_SERVER, pathNot: inSrc(['demo', 'ingest', ...L2, ...L1, ...L0]) },
    },
    {
      name: 'L2-query-shard-render-clickhouse-use-only-L1-and-below',
      severity: 'error',
      comment:
        'query (parsing), shard (storage format), render (output) and clickhouse (the ClickHouse client and schema) are '
        + 'independent building blocks: each imports its own folder and L1 (model, dns), L0 (lib, errors, config); never '
        + 'each other and never a use case (L3) or above.',
      from: { path: '^src/(query|shard|render|clickhouse)/' },
      to: { path: LAYERED_BUT_SERVER, pathNot: `^src/($1|${[...L1, ...L0].join('|')})/` },
    },
    {
      name: 'shard-generated-only-used-by-shard',
      severity: 'error',
      comment:
        'src/shard/generated is FlatBuffers code from schema/generate.sh; the rest of the tree goes through shard\'s '
        + 'reader and writer, so a schema change stays inside src/shard.',
      from: { pathNot: '^src/shard/' },
      to: { path: '^src/shard/generated/' },
    },
    {
      name: 'L1-model-uses-dns-and-L0',
      severity: 'error',
      comment: 'model (L1) is built on dns (L1) and L0 (lib, errors, config) only.',
      from: { path: inSrc(['model']) },
      to: { path: LAYERED_BUT_SERVER, pathNot: inSrc(['model', 'dns', ...L0]) },
    },
    {
      name: 'L1-dns-uses-only-L0',
      severity: 'error',
      comment: 'dns (L1) is the wire-format base that model builds on: it imports L0 (lib, errors, config) only, never model.',
      from: { path: inSrc(['dns']) },
      to: { path: LAYERED_BUT_SERVER, pathNot: inSrc(['dns', ...L0]) },
    },
    {
      name: 'L0-lib-uses-only-errors-config',
      severity: 'error',
      comment: 'lib (L0) is general-purpose code: it imports errors and config and nothing else from src.',
      from: { path: inSrc(['lib']) },
      to: { path: LAYERED_BUT_SERVER, pathNot: inSrc(['lib', 'errors', 'config']) },
    },
    {
      name: 'L0-errors-config-are-leaves',
      severity: 'error',
      comment: 'errors and config are the leaves everybody imports: they import no other src folder (not even each other).',
      from: { path: '^src/(errors|config)/' },
      to: { path: LAYERED_BUT_SERVER, pathNot: '^src/$1/' },
    },

    // ---- worker threads --------------------------------------------------------------------------------------

    {
      name: 'src-never-imports-workers',
      severity: 'error',
      comment: 'workers/*.ts are thread entry points loaded by file name; src code never imports them.',
      from: { path: '^src/' },
      to: { path: '^workers/' },
    },
    {
      name: 'worker-scan-uses-search-local-and-L2-and-below',
      severity: 'error',
      comment: 'The scan worker runs the local (in-thread) part of a search: search/local, and L2 (query, shard, render) and below.',
      from: { path: '^workers/scan\\.ts$' },
      to: { path: LAYERED_BUT_SERVER, pathNot: `^src/(search/local|${[...L2, ...L1, ...L0].join('|')})/` },
    },
    {
      name: 'worker-ingest-uses-ingest-and-L2-and-below',
      severity: 'error',
      comment: 'The ingest worker parses input files into shards: ingest, and L2 and below.',
      from: { path: '^workers/ingest\\.ts$' },
      to: { path: LAYERED_BUT_SERVER, pathNot: inSrc(['ingest', ...L2, ...L1, ...L0]) },
    },
    {
      name: 'worker-demo-uses-demo-and-L2-and-below',
      severity: 'error',
      comment: 'The demo worker generates one part of the demo data set into shards: demo, and L2 and below.',
      from: { path: '^workers/demo\\.ts$' },
      to: { path: LAYERED_BUT_SERVER, pathNot: inSrc(['demo', ...L2, ...L1, ...L0]) },
    },
    {
      name: 'worker-compact-uses-shard-and-below',
      severity: 'error',
      comment: 'The compaction worker merges shards: shard, and L1 (model, dns) and L0 only.',
      from: { path: '^workers/compact\\.ts$' },
      to: { path: LAYERED_BUT_SERVER, pathNot: inSrc(['shard', ...L1, ...L0]) },
    },
    {
      name: 'workers-never-start-workers',
      severity: 'error',
      comment:
        'A worker thread runs its task and starts no threads: nothing a workers/*.ts entry point loads may reach '
        + 'lib/threads.ts (the pools). The module that starts a pool names its entry point by file name, which no import '
        + 'shows; an implementation that imported its starter back (compactor.ts and workers/compact.ts, parallel.ts '
        + 'and workers/ingest.ts did) made a runtime cycle, each worker thread loading the code that started it.',
      from: { path: '^workers/' },
      to: { path: '^src/lib/threads\\.ts$', reachable: true },
    },
    {
      name: 'other-workers-stay-below-auth-and-cli',
      severity: 'error',
      comment: 'Any other worker thread runs below the request path: never cli or auth (nor server: see only-cli-imports-server).',
      from: { path: '^workers/', pathNot: '^workers/(scan|ingest|compact|demo)\\.ts$' },
      to: { path: inSrc(['cli', 'auth']) },
    },

    // ---- imports that cannot be checked ----------------------------------------------------------------------

    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve to a file or an installed package cannot be checked against the rules above.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],

  options: {
    // Only our own code is checked; packages are leaves.
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    // Resolve the NodeNext `.js` specifiers to the `.ts` sources, and keep `import type` (removed by tsc) as a dependency.
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.d.ts', '.js', '.cjs', '.mjs', '.json'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
