// ts-jest, plus one line that binds the standard built-ins the code reads in hot loops (Math, Number, Infinity, typed
// arrays...) to module-scope constants holding the very same objects.
//
// Why: jest runs every module inside a vm context, and on Node 20 each read of a global from such a context goes
// through the context's property interceptors (and jest 30's global Proxy): `Math.floor` in a loop measured 48x slower
// than in plain Node (12 s against 0.25 s for 2e7 iterations), which made the simulator suites 2-3x slower than the
// same runs under ts-node. A module-scope constant is an ordinary local read.
//
// Nothing else changes: the constants are the sandbox's own objects (`globalThis.X`, read when the module loads), so
// `jest.spyOn(Math, 'random')` and friends still act on them. Globals that jest's fake timers replace (Date,
// setTimeout, performance, ...) are deliberately not bound, nor are Error, Promise or Symbol. `undefined` needs no
// binding (V8 reads it as a constant). The line is inserted after the "use strict" directive on line 1, so source
// maps shift by columns on that line only.
const tsJest = require('ts-jest').default;

const BUILTINS = [
  'Math', 'Number', 'Object', 'Array', 'Map', 'Set', 'WeakMap', 'JSON', 'String', 'Boolean', 'Infinity', 'NaN',
  'Float64Array', 'Float32Array', 'Int32Array', 'Uint32Array', 'Int16Array', 'Uint16Array', 'Int8Array', 'Uint8Array',
  'isFinite', 'isNaN', 'parseInt', 'parseFloat',
];
const PRELUDE = `const { ${BUILTINS.join(', ')} } = globalThis;`;
const USE_STRICT = /^(['"])use strict\1;?/;

/**
 * The prelude for one compiled module: the built-ins it does not declare itself at module scope (a top-level
 * `const Map = ...` beside the prelude's would be a duplicate declaration, and the module would not load). TypeScript
 * emits module-scope declarations unindented, nested ones indented (these only shadow the constant, which is fine).
 */
function preludeFor(code) {
  const own = BUILTINS.filter((name) => new RegExp(`^(?:const|let|var|function\\*?|class)\\s+(?:[{[][^=]*\\b)?${name}\\b`, 'm').test(code));
  return own.length === 0 ? PRELUDE : `const { ${BUILTINS.filter((n) => !own.includes(n)).join(', ')} } = globalThis;`;
}

module.exports = {
  preludeFor,
  createTransformer(options) {
    const inner = tsJest.createTransformer(options);
    const bind = (code) => {
      const directive = USE_STRICT.exec(code)?.[0] ?? '';
      return directive + preludeFor(code) + code.slice(directive.length);
    };
    const wrap = (out) => (typeof out === 'string' ? bind(out) : { ...out, code: bind(out.code) });
    return {
      process: (source, path, transformOptions) => wrap(inner.process(source, path, transformOptions)),
      processAsync: async (source, path, transformOptions) => wrap(await inner.processAsync(source, path, transformOptions)),
      getCacheKey: (source, path, transformOptions) => `${inner.getCacheKey(source, path, transformOptions)}:${PRELUDE}`,
      getCacheKeyAsync: async (source, path, transformOptions) =>
        `${await inner.getCacheKeyAsync(source, path, transformOptions)}:${PRELUDE}`,
    };
  },
};
