// test/transform.js binds the standard built-ins to module constants (jest's vm context makes each global read slow);
// a module that declares one of them itself must still load, with its own declaration.
import * as vm from 'vm';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { preludeFor } = require('../transform.js') as { preludeFor: (code: string) => string };

const loads = (code: string) => () => new vm.Script(preludeFor(code) + code);

test('fails when a module that declares a built-in at module scope is given the prelude\'s binding too (it would not load)', () => {
  for (const code of ['const Map = new WeakMap();', 'function isFinite(x) { return x === x; }', 'class Number {}', 'const { Set, other } = require("x");']) {
    expect(loads(code)).not.toThrow();
  }
  expect(preludeFor('const Map = 1;')).not.toMatch(/\bMap\b/);
  // Anything else is still bound: a nested declaration only shadows it, and a name that merely starts alike is not it.
  expect(preludeFor('function f() {\n  const Map = 1;\n}\nconst MapLike = 2;')).toMatch(/\bMap\b/);
  expect(preludeFor('const x = Math.floor(1);')).toMatch(/\bMath\b.*= globalThis;$/);
});
