import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
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
const START_TIMEOUT_MS = 90_000;

/**
 * Starts the one PostgreSQL server of a test run (vitest `globalSetup`; see
 * postgres-keeper.mjs, which runs it as `nobody` when the tests run as root) and stops it at
 * the end. A server that cannot start is reported to the tests that need one, which then
 * fail (test/helpers/postgres.ts), while the other tests still run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const password = randomBytes(18).toString("base64url");
  let stderr = "";
  const keeper = fork(KEEPER, [ADMIN, password, "throwaway"], { stdio: ["ignore", "ignore", "pipe", "ipc"] });
  keeper.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    const answer = await firstMessage(keeper);
    project.provide(
      "postgres",
      "port" in answer ? { url: `postgres://${ADMIN}:${password}@127.0.0.1:${answer.port}/postgres` } : { error: answer.error },
    );
  } catch (error) {
    project.provide("postgres", { error: `${(error as Error).message}\n${stderr}`.trim() });
  }
  return async () => {
    if (keeper.exitCode !== null || keeper.signalCode !== null) return;
    const exited = new Promise((resolve) => keeper.once("exit", resolve));
    if (keeper.connected) keeper.send("stop");
    else keeper.kill();
    await exited;
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
