// @ts-check
/** Paths the dependency-cruiser configs share (`.dependency-cruiser*.cjs`). */
module.exports = {
  /** Agent and manager production sources, where cycles and layers are checked. */
  SRC: '^(apps/agent/src|services/manager/src)/',
  /** Tests and test kits: never imported by production, left out of the cycle check. */
  TESTS: '(\\.test\\.tsx?$|\\.spec\\.ts$|/test/|/testing[./]|/test-[^/]+\\.ts$|conformance\\.ts$)',
};
