import { homedir } from "node:os";
import { join } from "node:path";

/** The process environment, or a test's own. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Where bulkcheck keeps its files. BULKCHECK_CONFIG_DIR moves everything (config
 * and journal) into one directory, which tests and CI use; otherwise the XDG
 * base-directory conventions apply.
 */
export function configDir(env: Env): string {
  if (env.BULKCHECK_CONFIG_DIR) return env.BULKCHECK_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "bulkcheck");
}

export function stateDir(env: Env): string {
  if (env.BULKCHECK_CONFIG_DIR) return env.BULKCHECK_CONFIG_DIR;
  return join(env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state"), "bulkcheck");
}
