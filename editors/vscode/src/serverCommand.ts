// How the extension starts the language server, from the user's settings. No `vscode` import here,
// so the packaging test can run it with plain Node.
import * as fs from "fs";
import * as path from "path";

export interface ServerSettings {
  path?: string;
  pythonPath?: string;
  args?: string[];
}

export interface ServerCommand {
  command: string;
  args: string[];
}

/** What `WorkspaceConfiguration.inspect` returns for a setting (the parts read here). */
export interface InspectedSetting<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/**
 * The value of a setting that chooses the program to run: the user's own, else the default.
 * A workspace's value is never used, even from a VS Code that would let it override an application-scoped
 * setting: a repository's `.vscode/settings.json` must not choose what opening it runs.
 */
export function userValue<T>(inspected: InspectedSetting<T> | undefined): T | undefined {
  return inspected?.globalValue ?? inspected?.defaultValue;
}

export const SERVER_MODULE = "workrail_lsp";
export const DEFAULT_EXECUTABLE = "workrail-lsp";

/** `python -m workrail_lsp` when an interpreter is configured, else the `workrail-lsp` executable. */
export function serverCommand(settings: ServerSettings): ServerCommand {
  const extra = settings.args ?? [];
  if (settings.pythonPath && settings.pythonPath.trim() !== "") {
    return { command: settings.pythonPath, args: ["-m", SERVER_MODULE, ...extra] };
  }
  return { command: settings.path && settings.path.trim() !== "" ? settings.path : DEFAULT_EXECUTABLE, args: extra };
}

/** The absolute path of `command` (searched on PATH when it has no folder part), or undefined. */
export function findExecutable(command: string, envPath: string = process.env.PATH ?? ""): string | undefined {
  const isFile = (candidate: string) => {
    try {
      return fs.statSync(candidate).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes("/") || command.includes("\\")) {
    return isFile(command) ? path.resolve(command) : undefined;
  }
  const suffixes = process.platform === "win32" ? [".exe", ".cmd", ""] : [""];
  for (const folder of envPath.split(path.delimiter).filter(Boolean)) {
    for (const suffix of suffixes) {
      const candidate = path.join(folder, command + suffix);
      if (isFile(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

export function missingServerMessage(command: string): string {
  return (
    `WorkRail: cannot find the language server "${command}". ` +
    `Install WorkRail Kit (from a checkout: "pip install /path/to/workrail-kit"), or set "workrail.server.pythonPath" to a Python ` +
    `that has it (or "workrail.server.path" to the workrail-lsp executable).`
  );
}
