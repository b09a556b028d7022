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

export const KEEPER = fileURLToPath(new URL("./postgres-keeper.mjs", import.meta.url));
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
  const server = startPostgres(ADMIN, randomBytes(18).toString("base64url"));
  project.provide("postgres", await server.started);
  return server.stop;
}

export interface PostgresServer {
  /** An administrator's URL (database `postgres`) once the server runs, or why it did not start. */
  started: Promise<{ url: string } | { error: string }>;
  /** Stops the server and removes its files. */
  stop: () => Promise<void>;
}

/** Starts a throwaway PostgreSQL server through the keeper script `keeper`, initialised with the administrator `admin`. */
export function startPostgres(admin: string, password: string, keeper = KEEPER): PostgresServer {
  let stderr = "";
  const child = fork(keeper, [admin, password, "throwaway"], { stdio: ["ignore", "ignore", "pipe", "ipc"] });
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const started = firstMessage(child).then(
    (answer) => ("port" in answer ? { url: `postgres://${admin}:${password}@127.0.0.1:${answer.port}/postgres` } : answer),
    (error: Error) => ({ error: `${error.message}\n${stderr}`.trim() }),
  );
  return {
    started,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      if (child.connected) child.send("stop");
      else child.kill();
      await exited;
    },
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
