// Tokenizes Kora lines with the grammar through VS Code's own TextMate engine (vscode-textmate on
// the Oniguruma WebAssembly build) and checks the scopes of the tricky parts: nested format
// fields in f-strings, slices and dicts inside a field, and what follows the string.
'use strict';
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const root = path.join(__dirname, '..');
const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;

async function main() {
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (s) => new oniguruma.OnigScanner(s),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async () =>
      vsctm.parseRawGrammar(
        fs.readFileSync(path.join(root, 'syntaxes/kora.tmLanguage.json'), 'utf8'),
        'kora.tmLanguage.json',
      ),
  });
  const grammar = await registry.loadGrammar('source.kora');

  /** Every token of `line` as [text, its scopes joined]. */
  const tokens = (line) => {
    const r = grammar.tokenizeLine(line, vsctm.INITIAL);
    return r.tokens.map((t) => [line.slice(t.startIndex, t.endIndex), t.scopes.join(' ')]);
  };
  let failures = 0;
  let passed = 0;
  const expect = (line, text, scope, want = true) => {
    const found = tokens(line).filter(([t]) => t === text);
    const ok = found.length > 0 && found.every(([, s]) => s.includes(scope) === want);
    if (ok) {
      passed += 1;
    } else {
      failures += 1;
      console.error(`not ok: in ${line}\n  \`${text}\` should ${want ? '' : 'not '}be ${scope}; got:`);
      for (const [t, s] of tokens(line)) console.error(`    ${JSON.stringify(t)}  ${s}`);
    }
  };

  // The nested field's closing brace closes the spec's field, the next one the outer field.
  const nested = 'x = f"{x:>{width}} end" + 1';
  expect(nested, 'width', 'meta.format-spec.kora meta.interpolation.kora');
  expect(nested, '>', 'constant.other.format-spec.kora');
  expect(nested, ' end', 'string.interpolated.double.kora');
  expect(nested, ' end', 'meta.interpolation.kora', false);
  expect(nested, '1', 'string', false);
  // Two nested fields and a conversion.
  const two = 'f"{value!r:{fill}^{w}.{p}f}|"';
  expect(two, '!r', 'storage.type.format.conversion.kora');
  expect(two, 'p', 'meta.format-spec.kora meta.interpolation.kora');
  expect(two, '|', 'meta.interpolation.kora', false);
  // A slice's and a dict's colons belong to the expression, not to a format spec.
  const slice = 'f"{xs[1:2]} and {len({1: 2})}"';
  expect(slice, '1', 'meta.format-spec.kora', false);
  expect(slice, ' and ', 'meta.interpolation.kora', false);
  expect(slice, 'len', 'support.function');
  // Escaped braces stay text.
  expect('f"{{literal}} {x}"', '{{', 'constant.character.escape.brace.kora');

  console.log(`grammar: ${passed} passed, ${failures} failed`);
  process.exit(failures === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
