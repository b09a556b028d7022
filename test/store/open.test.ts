import { chmodSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { exitCodeFor } from "../../src/cli/exit-codes.js";
import { UsageError } from "../../src/errors.js";
import { openStore, type OpenedStore } from "../../src/store/open.js";
import { PostgresStore } from "../../src/store/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { StoreUnavailableError } from "../../src/store/store.js";
import { tempDir } from "../helpers/cli.js";
import { useTestDatabase } from "../helpers/postgres.js";
import { LEASE, newRun } from "./store-contract.js";

const databaseUrl = useTestDatabase();

/** This file's database's URL with the password taken out, and the password. */
function database(): { url: string; password: string } {
  const url = new URL(databaseUrl());
  const password = decodeURIComponent(url.password);
  url.password = "";
  return { url: url.href, password };
}

const opened: OpenedStore[] = [];
const servers: Array<{ server: Server; sockets: Socket[] }> = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  for (const { server, sockets } of servers.splice(0)) {
    sockets.forEach((socket) => socket.destroy());
    await new Promise((resolve) => server.close(resolve));
  }
});

async function open(location: string, env: Record<string, string | undefined> = {}): Promise<OpenedStore> {
  const store = await openStore(location, env);
  opened.push(store);
  return store;
}

/** How `url` is written with `password` in it. */
function withPassword(url: string, password: string): string {
  const given = new URL(url);
  given.password = encodeURIComponent(password);
  return given.href;
}

/** A port on 127.0.0.1 where no PostgreSQL answers: nothing listens (closed), or a server accepts and never says a word (silent). */
async function notPostgres(kind: "silent" | "closed"): Promise<number> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  if (kind === "closed") await new Promise((resolve) => server.close(resolve));
  else servers.push({ server, sockets });
  return port;
}

/** Everything an error could show: message, hint, stack and causes. */
function everythingSaid(error: unknown): string {
  const said: string[] = [];
  for (let at = error; at instanceof Error; at = at.cause) {
    said.push(at.message, at.stack ?? "", (at as { hint?: string }).hint ?? "", JSON.stringify(at, Object.getOwnPropertyNames(at)));
  }
  return said.join("\n");
}

describe("opening the store a location names", () => {
  it("opens a postgres:// or postgresql:// URL as the shared store, naming it without its password", async () => {
    const { url, password } = database();
    const store = await open(withPassword(url, password));
    expect(store).toBeInstanceOf(PostgresStore);
    expect(store.kind).toBe("postgres");
    expect(store.location).toBe(url);
    expect(store.location).not.toContain(password);
    expect(store.schemaVersion).toBe(4);
    await store.runs.create(newRun(), LEASE);
    const again = await open(withPassword(url.replace(/^postgres:/, "postgresql:"), password));
    expect((await again.runs.get("r1"))?.identity).toBe("same-command");
  });

  it("takes the password from PGPASSWORD, or from ~/.pgpass when the URL has none", async () => {
    const { url, password } = database();
    expect((await open(url, { PGPASSWORD: password })).location).toBe(url);
    const home = tempDir();
    const { hostname, port, pathname, username } = new URL(url);
    writeFileSync(join(home, ".pgpass"), `${hostname}:${port}:${pathname.slice(1)}:${username}:${password.replace(/[:\\]/g, "\\$&")}\n`);
    chmodSync(join(home, ".pgpass"), 0o600);
    expect((await open(url, { HOME: home })).location).toBe(url);
    const failure = await openStore(url, { HOME: tempDir() }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UsageError);
    expect((failure as Error).message).toContain("asks for a password and none is set");
  });

  it("honours sslmode: disable connects in plain TCP, require refuses a server without TLS", async () => {
    const { url, password } = database();
    const withMode = (mode: string) => {
      const given = new URL(withPassword(url, password));
      given.searchParams.set("sslmode", mode);
      return given.href;
    };
    expect((await open(withMode("disable"))).location).toContain("sslmode=disable");
    const failure = await openStore(withMode("require"), {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UsageError);
    expect((failure as Error).message).toMatch(/TLS|SSL/);
    expect(everythingSaid(failure)).not.toContain(password);
  });

  it("fails with StoreUnavailableError (exit 7) when no server answers, naming the host and database but never the password", async () => {
    for (const kind of ["closed", "silent"] as const) {
      const port = await notPostgres(kind);
      const url = `postgres://ana:s3cret-pw@127.0.0.1:${port}/team?connect_timeout=1`;
      const failure = await openStore(url, { PGPASSWORD: "other-s3cret" }).catch((error: unknown) => error);
      expect(failure, kind).toBeInstanceOf(StoreUnavailableError);
      expect(exitCodeFor((failure as StoreUnavailableError).kind)).toBe(7);
      expect((failure as Error).message).toContain(`postgres://ana@127.0.0.1:${port}/team`);
      expect((failure as StoreUnavailableError).hint).toMatch(/run the same command again/);
      expect(everythingSaid(failure)).not.toMatch(/s3cret/);
    }
  });

  it("refuses a wrong password as a usage error that shows neither password", async () => {
    const { url } = database();
    const failure = await openStore(withPassword(url, "not-the-password"), { PGPASSWORD: "nor-this-one" }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UsageError);
    expect((failure as Error).message).toContain(url);
    expect(everythingSaid(failure)).not.toMatch(/not-the-password|nor-this-one/);
  });

  it("opens a path or a file: URL as the embedded store, and refuses a URL of another kind", async () => {
    const path = join(tempDir(), "state", "bulkcheck.db");
    const store = await open(path);
    expect(store).toBeInstanceOf(SqliteStore);
    expect(store.location).toBe(path);
    await store.runs.create(newRun(), LEASE);
    await store.close();
    opened.pop();
    expect((await (await open(pathToFileURL(path).href)).runs.get("r1"))?.id).toBe("r1");
    const failure = await openStore("mysql://ana:s3cret@db.example/team", {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UsageError);
    expect((failure as Error).message).toBe("bulkcheck cannot keep its store at a mysql:// URL.");
  });
});
