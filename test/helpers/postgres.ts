import { randomBytes } from "node:crypto";
import pg from "pg";
import { beforeAll, beforeEach, inject } from "vitest";

/** The test run's server as an administrator's URL; throws (the test fails, it is not skipped) when it could not be started. */
export function postgresServerUrl(): string {
  const server = inject("postgres");
  if ("error" in server) throw new Error(`PostgreSQL could not be started for the tests: ${server.error}`);
  return server.url;
}

/** A new, empty database on the test run's server (one per test file, or per test that needs a fresh one), as a URL. */
export async function createTestDatabase(): Promise<string> {
  const serverUrl = postgresServerUrl();
  const name = `test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.href;
}

/**
 * Gives the calling test file a database of its own, created before its tests: returns its
 * URL's getter (for the tests: a hook of the file that threw would have them reported as
 * skipped). Without a server every test fails, each with the reason: none is skipped.
 */
export function useTestDatabase(): () => string {
  let url: string | undefined;
  let unavailable: Error | undefined;
  beforeAll(async () => {
    try {
      url = await createTestDatabase();
    } catch (error) {
      unavailable = error as Error;
    }
  });
  beforeEach(() => {
    if (unavailable !== undefined) throw unavailable;
  });
  return () => url!;
}
