import { createHash } from "node:crypto";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/client.js";
import { runIdentity } from "../../src/run/identity.js";
import type { Scope } from "../../src/store/store.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { API_KEY, e2eSandboxes, identifier, lines, submitAs, WAITING, type E2e } from "../helpers/sandbox.js";

/**
 * A run the release before (47aa12e) left open, made by its own CLI (see
 * test/fixtures/store-0.2/README.md), in an SQLite file and in a PostgreSQL schema: 500
 * numbers in two parts, one uploaded and still processing, the other keyed and waiting for
 * room when its --timeout ran out.
 */
const FIXTURE = new URL("../fixtures/store-0.2/open-run/", import.meta.url);
const ACTIVITY = "number_activity_batch";
const PART_SIZE = 250;

/** A run's stored part: its index, idempotency key, the sha256 of its bytes, and the task the release had for it. */
type Part = [part: number, key: string, sha256: string, taskId: string | null];

interface OpenedFixture {
  /** What the CLI needs to use the store. */
  env: Record<string, string>;
  runId: string;
  parts: Part[];
}

/**
 * The run belongs to a service URL and a list path of the machine that made it: they are
 * moved to this sandbox's and this list's (the store's scope, the run's identity and source),
 * as the same command on one machine would find them.
 */
interface Engine {
  open(
    e: E2e,
    madeWith: { baseUrl: string; sourcePath: string },
    moved: { scope: Scope; identity: string; list: string },
  ): Promise<OpenedFixture>;
  madeWith: string;
}

const command = (sourcePath: string) => ({ sourcePath, product: ACTIVITY, country: "GB" });

const engines: Array<[string, Engine]> = [
  [
    "an SQLite file",
    {
      madeWith: "made-with.json",
      async open(e, madeWith, moved) {
        const path = join(e.configDir, "bulkcheck.db");
        copyFileSync(new URL("bulkcheck.db", FIXTURE), path);
        const db = new Database(path);
        try {
          const [run] = db.prepare("SELECT id, identity FROM runs").raw(true).all() as Array<[string, string]>;
          expect(run![1]).toBe(runIdentity({ baseUrl: madeWith.baseUrl, profile: "default" }, command(madeWith.sourcePath)));
          db.prepare("UPDATE scopes SET base_url = ?").run([moved.scope.baseUrl]);
          db.prepare("UPDATE runs SET identity = ?, source = json_set(source, '$.path', ?)").run([moved.identity, moved.list]);
          const parts = db.prepare("SELECT part, idempotency_key, sha256, task_id FROM tasks ORDER BY part").raw(true).all() as Part[];
          return { env: {}, runId: run![0], parts };
        } finally {
          db.close();
        }
      },
    },
  ],
  [
    "a PostgreSQL schema",
    {
      madeWith: "made-with-postgres.json",
      async open(_e, madeWith, moved) {
        const url = await createTestDatabase();
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query(readFileSync(new URL("postgres.sql", FIXTURE), "utf8"));
          const { rows: runs } = await client.query<{ id: string; identity: string }>("SELECT id, identity FROM bulkcheck.runs");
          expect(runs[0]!.identity).toBe(runIdentity({ baseUrl: madeWith.baseUrl, profile: "default" }, command(madeWith.sourcePath)));
          await client.query("UPDATE bulkcheck.scopes SET base_url = $1", [moved.scope.baseUrl]);
          await client.query(
            "UPDATE bulkcheck.runs SET identity = $1, source = jsonb_set(source::jsonb, '{path}', to_jsonb($2::text))::json",
            [moved.identity, moved.list],
          );
          const { rows } = await client.query<Part>({
            text: "SELECT part, idempotency_key, sha256, task_id FROM bulkcheck.tasks ORDER BY part",
            rowMode: "array",
          });
          return { env: { BULKCHECK_STORE_URL: url }, runId: runs[0]!.id, parts: rows };
        } finally {
          await client.end();
        }
      },
    },
  ],
];

const sandbox = e2eSandboxes();

describe.each(engines)("an upgrade in the middle of a run of the release before, in %s, never double-charges", (_, engine) => {
  it("continues the run that release left open, under its keys: the part it uploaded is not paid for again", async () => {
    const e = await sandbox({ minTaskSize: 10 });
    const list = e.file("list.txt", readFileSync(new URL("list.txt", FIXTURE), "utf8"));
    const madeWith = JSON.parse(readFileSync(new URL(engine.madeWith, FIXTURE), "utf8")) as { baseUrl: string; sourcePath: string };
    const scope = { baseUrl: e.sandbox.url.replace(/\/$/, ""), profile: "default" };
    const { env, runId, parts } = await engine.open(e, madeWith, { scope, identity: runIdentity(scope, command(list)), list });
    for (const setting of [
      ["max-task-size", "250"],
      ["min-task-size", "10"],
    ]) {
      expect((await e.run(["config", "set", ...setting], { env })).code).toBe(0);
    }
    const uploaded = parts.filter(([, , , taskId]) => taskId !== null);
    expect(uploaded).toHaveLength(1);

    // The task that release created for its uploaded part, under the key it wrote, from the same bytes (this service has it as that one had).
    const [part, key, sha256] = uploaded[0]!;
    const numbers = lines(readFileSync(list, "utf8")).slice(part * PART_SIZE, (part + 1) * PART_SIZE);
    const upload = e.file("uploaded-part.txt", numbers.map((number) => `${identifier(number)}\n`).join(""));
    expect(createHash("sha256").update(readFileSync(upload)).digest("hex")).toBe(sha256);
    const client = createClient({ baseUrl: e.sandbox.url, apiKey: API_KEY });
    const { task } = await client.submitTask({ serviceType: ACTIVITY, country: "GB", file: upload, idempotencyKey: key });
    await client.close();

    const continued = await e.run([...submitAs(list, ACTIVITY, "GB", ...WAITING, "-o", "out.csv")], { env });
    expect(continued.code, continued.stderr).toBe(0);
    expect(continued.stderr).toContain(`Carrying on run ${runId}`);
    // The uploaded part is the task already paid for; only the other part is new: two tasks, not a new run's two more.
    expect(e.state().tasks.map((created) => created.id)).toContain(task.id);
    expect(e.state().tasks).toHaveLength(2);
    expect(lines(readFileSync(join(e.dir, "out.csv"), "utf8"))).toHaveLength(501);
  });
});
