import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The test run's PostgreSQL server as an administrator's URL (database `postgres`), or why it could not be started. */
    postgres: { url: string } | { error: string };
  }
}

const KEEPER = fileURLToPath(new URL("./postgres-keeper.mjs", import.meta.url));
/** The administrator the server is initialised with. */
const ADMIN = "bulkcheck_admin";
const START_TIMEOUT_MS = 60_000;

/**
 * Starts the one PostgreSQL server of a test run (vitest `globalSetup`) and stops it at the
 * end. PostgreSQL will not run as root, and the tests do (as CI does), so then the keeper and
 * the server run as `nobody`, in a temporary directory it owns; no user is created on the
 * machine. A server that cannot start is reported to the tests that need one, which fail
 * (test/helpers/postgres.ts): the other tests still run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-pg-"));
  const password = randomBytes(18).toString("base64url");
  let keeper: ChildProcess | undefined;
  let stderr = "";
  try {
    const runAs = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
    if (runAs) chownSync(dir, runAs.uid, runAs.gid);
    keeper = fork(KEEPER, [dir, ADMIN, password], {
      cwd: dir,
      ...runAs,
      env: { ...process.env, HOME: dir },
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      serialization: "json",
    });
    keeper.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const answer = await firstMessage(keeper);
    project.provide(
      "postgres",
      "port" in answer ? { url: `postgres://${ADMIN}:${password}@127.0.0.1:${answer.port}/postgres` } : { error: answer.error },
    );
  } catch (error) {
    project.provide("postgres", { error: `${(error as Error).message}\n${stderr}`.trim() });
  }
  return async () => {
    const running = keeper;
    if (running?.connected) {
      const exited = new Promise((resolve) => running.once("exit", resolve));
      running.send("stop");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
}

function firstMessage(keeper: ChildProcess): Promise<{ port: number } | { error: string }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`PostgreSQL did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    keeper.once("message", (message: { port: number } | { error: string }) => {
      clearTimeout(timer);
      resolve(message);
    });
    keeper.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the PostgreSQL keeper exited (${signal ?? `code ${code}`}) before the server started`));
    });
  });
}

/** The `nobody` account, from /etc/passwd (there is no Node API that looks a user up by name). */
function unprivilegedUser(): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("nobody:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (uid === undefined || gid === undefined) throw new Error("the tests run as root and there is no `nobody` user to run PostgreSQL as");
  return { uid: Number(uid), gid: Number(gid) };
}
