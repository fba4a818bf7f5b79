// The Test Explorer: lists the `test "name":` blocks of .ko files and runs them through
// `kora test FILE --format json` (one test: `--filter NAME --exact`), one process per file.

import { spawn } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';

/** A `test "name":` header at the start of a line; the name is a plain string literal. */
const TEST_HEADER = /^test\s+("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')\s*:/;

/** The tests of one file: their names (as `kora test` reports them) and 0-based lines. */
export function findTests(text: string): { name: string; line: number }[] {
  const out: { name: string; line: number }[] = [];
  text.split(/\r?\n/).forEach((l, line) => {
    const m = TEST_HEADER.exec(l);
    if (!m) return;
    const lit = m[1];
    let name = lit.slice(1, -1);
    if (lit.startsWith('"')) {
      try {
        name = JSON.parse(lit);
      } catch {
        // An escape JSON does not know: show the name as written.
      }
    }
    out.push({ name, line });
  });
  return out;
}

export function registerTests(context: vscode.ExtensionContext, koraPath: () => string): void {
  const ctrl = vscode.tests.createTestController('kora', 'Kora');
  context.subscriptions.push(ctrl);

  const fileItem = (uri: vscode.Uri): vscode.TestItem => {
    const existing = ctrl.items.get(uri.toString());
    if (existing) return existing;
    const item = ctrl.createTestItem(uri.toString(), path.basename(uri.fsPath), uri);
    ctrl.items.add(item);
    return item;
  };

  const refresh = (uri: vscode.Uri, text: string): void => {
    const found = findTests(text);
    if (found.length === 0) {
      ctrl.items.delete(uri.toString());
      return;
    }
    const file = fileItem(uri);
    file.children.replace(
      found.map((t) => {
        const item = ctrl.createTestItem(`${uri.toString()}::${t.name}`, t.name, uri);
        item.range = new vscode.Range(t.line, 0, t.line, 0);
        return item;
      }),
    );
  };

  const scanWorkspace = async (): Promise<void> => {
    for (const uri of await vscode.workspace.findFiles('**/*.ko', '**/{node_modules,target,.kora}/**')) {
      const bytes = await vscode.workspace.fs.readFile(uri);
      refresh(uri, Buffer.from(bytes).toString('utf8'));
    }
  };
  ctrl.resolveHandler = async (item) => {
    if (!item) await scanWorkspace();
  };
  ctrl.refreshHandler = async () => {
    ctrl.items.replace([]);
    await scanWorkspace();
  };

  const onDoc = (doc: vscode.TextDocument): void => {
    if (doc.languageId === 'kora' && doc.uri.scheme === 'file') refresh(doc.uri, doc.getText());
  };
  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument(onDoc),
    vscode.workspace.onDidChangeTextDocument((e) => onDoc(e.document)),
  );
  vscode.workspace.textDocuments.forEach(onDoc);
  const watcher = vscode.workspace.createFileSystemWatcher('**/*.ko');
  context.subscriptions.push(
    watcher,
    watcher.onDidDelete((uri) => ctrl.items.delete(uri.toString())),
  );

  const run = async (request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> => {
    const testRun = ctrl.createTestRun(request);
    // Per file: the tests to run, or `undefined` for all of them.
    const plan = new Map<string, { file: vscode.TestItem; only?: vscode.TestItem }[]>();
    const add = (item: vscode.TestItem): void => {
      if (request.exclude?.includes(item)) return;
      const file = item.parent ?? item;
      const list = plan.get(file.id) ?? [];
      list.push({ file, only: item.parent ? item : undefined });
      plan.set(file.id, list);
    };
    if (request.include) {
      request.include.forEach(add);
    } else {
      ctrl.items.forEach(add);
    }
    for (const entries of plan.values()) {
      if (token.isCancellationRequested) break;
      const file = entries[0].file;
      const whole = entries.some((e) => !e.only);
      const picks = whole ? [undefined] : entries.map((e) => e.only);
      for (const only of picks) {
        const items = only ? [only] : collect(file);
        items.forEach((i) => testRun.started(i));
        await runKora(koraPath(), file, only, items, testRun, token);
      }
    }
    testRun.end();
  };
  ctrl.createRunProfile('Run', vscode.TestRunProfileKind.Run, run, true);
}

function collect(file: vscode.TestItem): vscode.TestItem[] {
  const out: vscode.TestItem[] = [];
  file.children.forEach((c) => out.push(c));
  return out;
}

/** Runs `kora test` on one file (or one of its tests) and reports each JSON record. */
function runKora(
  kora: string,
  file: vscode.TestItem,
  only: vscode.TestItem | undefined,
  items: vscode.TestItem[],
  testRun: vscode.TestRun,
  token: vscode.CancellationToken,
): Promise<void> {
  const fsPath = file.uri!.fsPath;
  const args = ['test', fsPath, '--format', 'json', '--no-trace'];
  if (only) args.push('--filter', only.label, '--exact');
  return new Promise((resolve) => {
    const child = spawn(kora, args, { cwd: path.dirname(fsPath) });
    const cancel = token.onCancellationRequested(() => child.kill());
    const seen = new Set<vscode.TestItem>();
    let buffer = '';
    let stderr = '';
    const byName = (name: string) => items.find((i) => i.label === name);
    const record = (line: string): void => {
      if (line.trim() === '') return;
      let r: { event?: string; name?: string; outcome?: string; details?: string; line?: number };
      try {
        r = JSON.parse(line);
      } catch {
        testRun.appendOutput(`${line}\r\n`);
        return;
      }
      if (r.event === 'test' && r.name !== undefined) {
        const item = byName(r.name);
        if (!item) return;
        seen.add(item);
        if (r.outcome === 'passed') {
          testRun.passed(item);
        } else {
          const msg = new vscode.TestMessage(r.details ?? 'failed');
          if (item.uri && item.range) msg.location = new vscode.Location(item.uri, item.range);
          testRun.failed(item, msg);
        }
      } else if (r.event === 'file' && r.outcome === 'failed') {
        for (const i of items) {
          seen.add(i);
          testRun.errored(i, new vscode.TestMessage(r.details ?? 'the file could not run'));
        }
      }
    };
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString('utf8');
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      lines.forEach(record);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
      testRun.appendOutput(d.toString('utf8').replace(/\n/g, '\r\n'));
    });
    const finish = (why?: string): void => {
      cancel.dispose();
      record(buffer);
      for (const i of items) {
        if (seen.has(i)) continue;
        // Listed in the editor but not reported: renamed since the last save, or the run died.
        testRun.errored(
          i,
          new vscode.TestMessage(why ?? (stderr.trim() || `\`kora test\` did not report "${i.label}": save the file and run it again`)),
        );
      }
      resolve();
    };
    child.on('error', (e) =>
      finish(`cannot start \`${kora}\` (${e.message}): install kora or set "kora.path"`),
    );
    child.on('close', () => finish());
  });
}
