import { copyFileSync, mkdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/cli.js";
import { KEEPER, startPostgres } from "../helpers/postgres-global-setup.js";

const NODE_MODULES = fileURLToPath(new URL("../../node_modules", import.meta.url));

describe("the tests' PostgreSQL server", () => {
  // As root the server runs as `nobody` (PostgreSQL refuses root), who cannot enter a clone
  // under /root or any other 0700 directory (issue 28): `npm test` must pass there too.
  it.runIf(process.getuid?.() === 0)("starts from a clone that nobody but root can enter", async () => {
    const clone = tempDir("bulkcheck-private-clone-");
    expect(statSync(clone).mode & 0o777).toBe(0o700);
    mkdirSync(join(clone, "test", "helpers"), { recursive: true });
    const keeper = join(clone, "test", "helpers", "postgres-keeper.mjs");
    copyFileSync(KEEPER, keeper);
    symlinkSync(NODE_MODULES, join(clone, "node_modules"));
    const server = startPostgres("keeper_test", "keeper-test-password", keeper);
    try {
      const started = await server.started;
      expect(started).toEqual({ url: expect.any(String) });
      const client = new pg.Client({ connectionString: (started as { url: string }).url });
      await client.connect();
      try {
        expect((await client.query<{ answer: number }>("SELECT 1 + 1 AS answer")).rows).toEqual([{ answer: 2 }]);
      } finally {
        await client.end();
      }
    } finally {
      await server.stop();
      rmSync(clone, { recursive: true, force: true });
    }
  });
});
