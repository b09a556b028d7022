import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

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
