// The WorkRail extension: starts `workrail-lsp` for workflow files and adds "Validate workspace".
import * as vscode from "vscode";
import { ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";

import { findExecutable, missingServerMessage, serverCommand } from "./serverCommand";

// The server's own command id (a different id from the VS Code command: vscode-languageclient
// registers every server command as a VS Code command itself).
const SERVER_VALIDATE = "workrail.server.validateWorkspace";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;
let serverLog: vscode.LogOutputChannel | undefined;

interface ValidationResult {
  files: number;
  errors: number;
  warnings: number;
  results: { path: string; diagnostics: { code: string; severity: string; message: string; line: number; column: number }[] }[];
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("WorkRail");
  serverLog = vscode.window.createOutputChannel("WorkRail Language Server", { log: true });
  context.subscriptions.push(
    output,
    serverLog,
    vscode.commands.registerCommand("workrail.validateWorkspace", validateWorkspace),
    vscode.commands.registerCommand("workrail.restartServer", async () => {
      await stopClient();
      await startClient(context);
    }),
  );
  await startClient(context);
}

export function deactivate(): Thenable<void> | undefined {
  return stopClient();
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const settings = vscode.workspace.getConfiguration("workrail");
  const { command, args } = serverCommand({
    path: settings.get<string>("server.path"),
    pythonPath: settings.get<string>("server.pythonPath"),
    args: settings.get<string[]>("server.args"),
  });
  const executable = findExecutable(command);
  if (executable === undefined) {
    const choice = await vscode.window.showErrorMessage(missingServerMessage(command), "Open Settings");
    if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "workrail.server");
    }
    return;
  }
  const serverOptions: ServerOptions = { command: executable, args, transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "json" },
      { scheme: "file", language: "jsonc" },
      { scheme: "file", language: "yaml" },
      { scheme: "untitled", language: "json" },
    ],
    initializationOptions: {
      workrail: {
        workflowGlobs: settings.get<string[]>("workflowGlobs"),
        extraWorkflowDirs: settings.get<string[]>("extraWorkflowDirs"),
      },
    },
    synchronize: {
      configurationSection: "workrail",
      fileEvents: vscode.workspace.createFileSystemWatcher("**/*.{json,yaml,yml}"),
    },
    outputChannel: serverLog,
  };
  client = new LanguageClient("workrail", "WorkRail", serverOptions, clientOptions);
  context.subscriptions.push(client);
  await client.start();
}

async function stopClient(): Promise<void> {
  const running = client;
  client = undefined;
  if (running !== undefined) {
    await running.stop();
  }
}

async function validateWorkspace(): Promise<void> {
  if (client === undefined) {
    vscode.window.showErrorMessage("WorkRail: the language server is not running (see the WorkRail output).");
    return;
  }
  const result = (await client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_VALIDATE, arguments: [] })) as ValidationResult;
  output?.clear();
  for (const file of result.results) {
    for (const d of file.diagnostics) {
      output?.appendLine(`${file.path}:${d.line}:${d.column}: ${d.code} ${d.severity} ${d.message}`);
    }
  }
  output?.appendLine(`${result.files} workflow files, ${result.errors} errors, ${result.warnings} warnings`);
  output?.show(true);
  const summary = `WorkRail: ${result.files} workflow files, ${result.errors} errors, ${result.warnings} warnings`;
  if (result.errors > 0) {
    vscode.window.showWarningMessage(summary);
  } else {
    vscode.window.showInformationMessage(summary);
  }
}
