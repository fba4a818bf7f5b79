// Checks the extension's static parts without VS Code: the manifest points at files that exist,
// the grammar and language configuration are valid JSON with valid regular expressions, and the
// extension is declared as Kora's formatter.
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..');
const read = (p) => JSON.parse(fs.readFileSync(path.join(root, p), 'utf8'));
let failures = 0;
const fail = (msg) => {
  failures += 1;
  console.error(`not ok: ${msg}`);
};

const pkg = read('package.json');
for (const lang of pkg.contributes.languages) {
  for (const p of [lang.configuration, lang.icon.light, lang.icon.dark]) {
    if (!fs.existsSync(path.join(root, p))) fail(`${p} (named in package.json) does not exist`);
  }
}
for (const g of pkg.contributes.grammars) {
  if (!fs.existsSync(path.join(root, g.path))) fail(`${g.path} does not exist`);
}

// Oniguruma accepts a little more than JavaScript; every pattern here sticks to the common part.
function checkRegexes(node, where) {
  if (Array.isArray(node)) {
    node.forEach((n, i) => checkRegexes(n, `${where}[${i}]`));
    return;
  }
  if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (['match', 'begin', 'end'].includes(k) && typeof v === 'string') {
        try {
          new RegExp(v.replace(/^\(\?i\)/, ''));
        } catch (e) {
          fail(`${where}.${k}: ${e.message}`);
        }
      } else {
        checkRegexes(v, `${where}.${k}`);
      }
    }
  }
}
checkRegexes(read('syntaxes/kora.tmLanguage.json'), 'grammar');
const conf = read('language-configuration.json');
checkRegexes(conf.indentationRules, 'indentationRules');
for (const r of conf.onEnterRules) checkRegexes({ begin: r.beforeText }, 'onEnterRules');

// Format Document and format on save reach `kora lsp` only if this extension is Kora's formatter.
const formatter = (pkg.contributes.configurationDefaults || {})['[kora]'] || {};
if (formatter['editor.defaultFormatter'] !== `${pkg.publisher}.${pkg.name}`) {
  fail(`configurationDefaults must make ${pkg.publisher}.${pkg.name} the default formatter of [kora]`);
}

// The marketplace shows the icon and links the repository; both must be there.
if (!pkg.icon || !pkg.icon.endsWith('.png') || !fs.existsSync(path.join(root, pkg.icon))) {
  fail('package.json needs `icon`: a PNG that exists (the marketplace does not take SVG)');
}
if (!pkg.repository || !pkg.repository.url) fail('package.json needs `repository.url`');

if (!fs.existsSync(path.join(root, pkg.main))) {
  fail(`${pkg.main} is missing: run \`npm run compile\` first`);
} else if (/require\("vscode-languageclient/.test(fs.readFileSync(path.join(root, pkg.main), 'utf8'))) {
  // The package ships no node_modules: the bundle must carry its dependencies.
  fail(`${pkg.main} requires vscode-languageclient at run time: build it with esbuild (\`npm run compile\`)`);
}
console.log(failures === 0 ? '1 passed, 0 failed' : `0 passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
