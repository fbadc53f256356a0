import { scenarioLoader } from '../../lib/sim/scenario-file';

/** Which loader a scenario file gets, from what the running Node.js and the scenario's project offer. */
describe('scenarioLoader', () => {
  const env = { stripsTypes: true, loaderRegistered: false, packageType: undefined as string | undefined, tsNode: true, nodeVersion: 'v22.23.5' };

  test('Node.js 22.18+ loads TypeScript itself, except a CommonJS .ts or .cts file, which needs the project\'s ts-node to compile its imports', () => {
    expect(scenarioLoader('/p/s.ts', env)).toBe('node');
    expect(scenarioLoader('/p/s.ts', { ...env, packageType: 'module' })).toBe('node'); // ts-node 10 refuses it: ERR_REQUIRE_ESM
    expect(scenarioLoader('/p/s.mts', { ...env, packageType: 'commonjs' })).toBe('node');
    expect(scenarioLoader('/p/s.ts', { ...env, packageType: 'commonjs' })).toBe('ts-node');
    expect(scenarioLoader('/p/s.cts', env)).toBe('ts-node');
    // Without ts-node Node.js tries, and a CommonJS file with import fails with what to change (requireScenarioModule).
    expect(scenarioLoader('/p/s.ts', { ...env, packageType: 'commonjs', tsNode: false })).toBe('node');
  });

  test('before 22.18 TypeScript needs the project\'s ts-node, or fails saying what to change', () => {
    const old = { ...env, stripsTypes: false, nodeVersion: 'v20.20.2' };
    expect(scenarioLoader('/p/s.ts', old)).toBe('ts-node');
    expect(scenarioLoader('/p/s.ts', { ...old, tsNode: false })).toEqual({
      error: "/p/s.ts: Node.js v20.20.2 cannot load TypeScript by itself: use Node.js 22.18 or newer (it strips types), add ts-node to the scenario's project, "
        + 'or compile the scenario to JavaScript',
    });
  });

  test('JavaScript, and TypeScript where a loader is registered already, are required as they are', () => {
    expect(scenarioLoader('/p/s.js', { ...env, stripsTypes: false, tsNode: false })).toBe('node');
    expect(scenarioLoader('/p/s.ts', { ...env, packageType: 'commonjs', loaderRegistered: true })).toBe('node');
  });
});
