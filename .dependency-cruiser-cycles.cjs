// @ts-check
/**
 * Import cycles in the agent and the manager, file and folder level, over production code only.
 * Tests and test kits are left out: a test sits in the folder it tests and imports a kit that
 * imports that folder again, which is a loop of the test tree, not of the layers. That production
 * never imports a kit is checked by `no-test-kits-in-production` in `.dependency-cruiser.cjs`.
 */
const base = require('./.dependency-cruiser.cjs');

const { SRC, TESTS } = require('./scripts/boundary-paths.cjs');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-file-cycles',
      comment: 'A file-level import cycle in the agent or the manager: split the shared part out.',
      severity: 'error',
      from: { path: SRC },
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      comment:
        'A folder-level cycle (a/ imports b/ and b/ imports a/, directly or around a loop): one ' +
        'of the folders is the lower layer; move what the other needs into it or behind an interface.',
      severity: 'error',
      scope: 'folder',
      from: { path: SRC },
      to: { circular: true },
    },
  ],
  options: {
    ...base.options,
    exclude: { path: `(^|/)(dist|node_modules|coverage)/|${TESTS}` },
  },
};
