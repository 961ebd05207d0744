// The WorkRail extension: starts `workrail-lsp` for workflow files and adds "Validate workspace".
//
// Workflow files get languages of their own (`workrail-json`, `workrail-yaml`) so that exactly one
// voice speaks about them: ours. Left as `json`, VS Code's JSON service would report every syntax
// and schema problem a second time and offer its own completions and hovers next to ours. The
// server decides which files are workflows (globs, extra folders, `$schema`), and the extension
// moves each such JSON/YAML document to the matching workflow language as it opens.
import * as vscode from "vscode";
import { ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";

import { findExecutable, missingServerMessage, serverCommand, userValue } from "./serverCommand";

// The server's own command id (a different id from the VS Code command: vscode-languageclient
// registers every server command as a VS Code command itself).
const SERVER_VALIDATE = "workrail.server.validateWorkspace";
const SERVER_IS_WORKFLOW = "workrail.server.isWorkflow";

/** The workflow language for each language a workflow file may open as. */
const WORKFLOW_LANGUAGE: Record<string, string> = {
  json: "workrail-json",
  jsonc: "workrail-json",
  yaml: "workrail-yaml",
};

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;
let serverLog: vscode.LogOutputChannel | undefined;

// The shape of `workrail validate --format json` (one report shape for both).
interface ValidationResult {
  summary: { filesChecked: number; errors: number; warnings: number };
  files: { path: string; diagnostics: { code: string; severity: string; message: string; line: number; column: number }[] }[];
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("WorkRail");
  serverLog = vscode.window.createOutputChannel("WorkRail Language Server", { log: true });
  context.subscriptions.push(
    output,
    serverLog,
    vscode.commands.registerCommand("workrail.validateWorkspace", validateWorkspace),
    vscode.commands.registerCommand("workrail.restartServer", () => restartClient(context)),
    // A new server path, interpreter or arguments takes effect at once, without a reload.
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("workrail.server")) {
        await restartClient(context);
      }
    }),
  );
  await startClient(context);
  context.subscriptions.push(vscode.workspace.onDidOpenTextDocument(claimWorkflow));
  for (const document of vscode.workspace.textDocuments) {
    await claimWorkflow(document);
  }
}

/** Moves a JSON or YAML document that the server calls a workflow to the workflow language. */
async function claimWorkflow(document: vscode.TextDocument): Promise<void> {
  const target = WORKFLOW_LANGUAGE[document.languageId];
  if (target === undefined || client === undefined || !["file", "untitled"].includes(document.uri.scheme)) {
    return;
  }
  let isWorkflow = false;
  try {
    isWorkflow = (await client.sendRequest(ExecuteCommandRequest.type, {
      command: SERVER_IS_WORKFLOW,
      arguments: [document.uri.toString(), document.getText()],
    })) as boolean;
  } catch (error) {
    serverLog?.warn(`could not ask the server whether ${document.uri.toString()} is a workflow: ${error}`);
    return;
  }
  if (isWorkflow) {
    await vscode.languages.setTextDocumentLanguage(document, target);
  }
}

export function deactivate(): Thenable<void> | undefined {
  return stopClient();
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const settings = vscode.workspace.getConfiguration("workrail");
  const { command, args } = serverCommand({
    path: userValue(settings.inspect<string>("server.path")),
    pythonPath: userValue(settings.inspect<string>("server.pythonPath")),
    args: userValue(settings.inspect<string[]>("server.args")),
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
      { scheme: "file", language: "workrail-json" },
      { scheme: "file", language: "workrail-yaml" },
      { scheme: "untitled", language: "workrail-json" },
      { scheme: "untitled", language: "workrail-yaml" },
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

async function restartClient(context: vscode.ExtensionContext): Promise<void> {
  await stopClient();
  await startClient(context);
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
  for (const file of result.files) {
    for (const d of file.diagnostics) {
      output?.appendLine(`${file.path}:${d.line}:${d.column}: ${d.code} ${d.severity} ${d.message}`);
    }
  }
  const { filesChecked, errors, warnings } = result.summary;
  output?.appendLine(`${filesChecked} workflow files, ${errors} errors, ${warnings} warnings`);
  output?.show(true);
  const summary = `WorkRail: ${filesChecked} workflow files, ${errors} errors, ${warnings} warnings`;
  if (errors > 0) {
    vscode.window.showWarningMessage(summary);
  } else {
    vscode.window.showInformationMessage(summary);
  }
}
