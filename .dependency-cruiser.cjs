// @ts-check
/**
 * The boundaries of the tree (issue 14), checked by `npm run lint`; import cycles are in
 * `.dependency-cruiser-cycles.cjs`. Each rule says what it
 * keeps apart and why; `docs/architecture.md` ("Where things live") is the map they enforce.
 */
const { TESTS } = require('./scripts/boundary-paths.cjs');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'packages-stay-below-apps',
      comment:
        'protocol, striping and sources are the contract and pure algorithms: never apps or services.',
      severity: 'error',
      from: { path: '^packages/' },
      to: { path: '^(apps|services)/|@freeloader/(agent|manager|console)' },
    },
    {
      name: 'protocol-imports-no-package',
      comment: 'protocol is the bottom of the tree: it imports no other FreeLoader package.',
      severity: 'error',
      from: { path: '^packages/protocol/' },
      to: { path: '^packages/(striping|sources)/' },
    },
    {
      name: 'repositories-only-use-db',
      comment:
        'Repositories are the only SQL and depend on nothing of the domain: db/ and protocol types only.',
      severity: 'error',
      from: { path: '^services/manager/src/repositories/', pathNot: TESTS },
      to: {
        path: '^services/manager/src/',
        pathNot: '^services/manager/src/(repositories|db)/',
      },
    },
    {
      name: 'placement-is-a-lower-layer',
      comment:
        'imports, prefix caching and relocation call placement; placement calls none of them.',
      severity: 'error',
      from: { path: '^services/manager/src/placement/' },
      to: { path: '^services/manager/src/(imports|prefix|relocation|repair|routes)/' },
    },
    {
      name: 'domains-do-not-call-each-other',
      comment:
        'imports/, prefix/ and relocation/ meet in placement/ and repositories/, never directly.',
      severity: 'error',
      from: { path: '^services/manager/src/(imports|prefix|relocation|repair)/' },
      to: {
        path: '^services/manager/src/(imports|prefix|relocation|repair)/',
        pathNot: '^services/manager/src/$1/',
      },
    },
    {
      name: 'agent-lower-layers',
      comment:
        'store/, service/ and governor/ are below the daemon: they never reach up into jobs, patching or the daemon.',
      severity: 'error',
      from: { path: '^apps/agent/src/(store|service|governor)/' },
      to: { path: '^apps/agent/src/(jobs|patching|daemon)/' },
    },
    {
      name: 'dataset-fs-is-platform-neutral',
      comment:
        'The read-only file system serves FUSE and other front ends: it never imports the FUSE adapter.',
      severity: 'error',
      from: { path: '^apps/agent/src/dataset-fs/' },
      to: { path: '^apps/agent/src/mount/' },
    },
    {
      name: 'no-test-kits-in-production',
      comment: 'Production code never imports a test file or a test kit (they are not in dist).',
      severity: 'error',
      from: { path: '^(apps|services|packages)/[^/]+/src/', pathNot: TESTS },
      to: { path: TESTS },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|coverage)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs'],
    },
  },
};
