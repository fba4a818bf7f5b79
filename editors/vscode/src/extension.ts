// The Kora extension: starts `kora lsp` for the editor features, `kora dap` for debugging,
// runs the current file in a terminal, and lists and runs `test` blocks in the Test Explorer.

import * as path from 'path';
import * as vscode from 'vscode';
import { registerTests } from './tests';
import { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';

let client: LanguageClient | undefined;

/** The `kora` executable: the `kora.path` setting, or `kora` on PATH. */
function koraPath(): string {
  const configured = vscode.workspace.getConfiguration('kora').get<string>('path');
  return configured && configured.trim() !== '' ? configured.trim() : 'kora';
}

/** Quotes one word for the shell of an integrated terminal. */
function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_./:\\-]+$/.test(word)) {
    return word;
  }
  return process.platform === 'win32' ? `"${word.replace(/"/g, '""')}"` : `'${word.replace(/'/g, `'\\''`)}'`;
}

function startClient(context: vscode.ExtensionContext): Promise<void> {
  const serverOptions: ServerOptions = { command: koraPath(), args: ['lsp'] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'kora' },
      { scheme: 'untitled', language: 'kora' },
    ],
  };
  client = new LanguageClient('kora', 'Kora', serverOptions, clientOptions);
  context.subscriptions.push(client);
  return client.start().catch((err: unknown) => {
    void vscode.window.showErrorMessage(
      `Kora: cannot start \`${koraPath()} lsp\` (${String(err)}). Install kora or set "kora.path".`,
    );
  });
}

/** "Run Kora File": saves the file and runs `kora run FILE` in the Kora terminal. */
async function runFile(uri?: vscode.Uri): Promise<void> {
  const doc = uri
    ? await vscode.workspace.openTextDocument(uri)
    : vscode.window.activeTextEditor?.document;
  if (!doc || doc.languageId !== 'kora') {
    void vscode.window.showWarningMessage('Kora: open a .ko file to run it.');
    return;
  }
  if (doc.isUntitled) {
    void vscode.window.showWarningMessage('Kora: save the file before running it.');
    return;
  }
  if (doc.isDirty && !(await doc.save())) {
    return;
  }
  const file = doc.uri.fsPath;
  const terminal =
    vscode.window.terminals.find((t) => t.name === 'Kora') ??
    vscode.window.createTerminal({ name: 'Kora', cwd: path.dirname(file) });
  terminal.show(true);
  terminal.sendText(`${shellQuote(koraPath())} run ${shellQuote(file)}`);
}

/** Fills in a launch configuration when there is no launch.json (F5 on a .ko file). */
class KoraConfigurationProvider implements vscode.DebugConfigurationProvider {
  resolveDebugConfiguration(
    _folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): vscode.ProviderResult<vscode.DebugConfiguration> {
    if (!config.type && !config.request && !config.name) {
      const editor = vscode.window.activeTextEditor;
      if (editor && editor.document.languageId === 'kora') {
        config.type = 'kora';
        config.name = 'Debug Kora file';
        config.request = 'launch';
        config.program = '${file}';
      }
    }
    if (!config.program) {
      void vscode.window.showErrorMessage('Kora: the launch configuration needs "program", the .ko file to debug.');
      return undefined;
    }
    return config;
  }
}

/** Starts `kora dap` for each debug session. */
class KoraAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.DebugAdapterDescriptor {
    const cwd = session.workspaceFolder?.uri.fsPath;
    return new vscode.DebugAdapterExecutable(koraPath(), ['dap'], cwd ? { cwd } : undefined);
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand('kora.runFile', runFile),
    vscode.commands.registerCommand('kora.restartServer', async () => {
      if (client) {
        await client.stop();
        client = undefined;
      }
      await startClient(context);
    }),
    vscode.debug.registerDebugConfigurationProvider('kora', new KoraConfigurationProvider()),
    vscode.debug.registerDebugAdapterDescriptorFactory('kora', new KoraAdapterFactory()),
  );
  registerTests(context, koraPath);
  await startClient(context);
}

export async function deactivate(): Promise<void> {
  if (client) {
    await client.stop();
  }
}
