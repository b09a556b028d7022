import { createHash } from "node:crypto";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/client.js";
import { runIdentity } from "../../src/run/identity.js";
import { API_KEY, e2eSandboxes, identifier, lines, submitAs, WAITING } from "../helpers/sandbox.js";

/**
 * A run the release before (47aa12e) left open, made by its own CLI (see
 * test/fixtures/store-0.2/README.md): 500 numbers in two parts, part 1 uploaded and still
 * processing, part 0 keyed and waiting for room when its --timeout ran out.
 */
const FIXTURE = new URL("../fixtures/store-0.2/open-run/", import.meta.url);
const MADE_WITH = JSON.parse(readFileSync(new URL("made-with.json", FIXTURE), "utf8")) as { baseUrl: string; sourcePath: string };
const ACTIVITY = "number_activity_batch";

const sandbox = e2eSandboxes();

describe("an upgrade in the middle of a run of the release before never double-charges", () => {
  it("continues the run that release left open, under its keys: the part it uploaded is not paid for again", async () => {
    const e = await sandbox({ minTaskSize: 10 });
    const list = e.file("list.txt", readFileSync(new URL("list.txt", FIXTURE), "utf8"));
    const store = join(e.configDir, "bulkcheck.db");
    copyFileSync(new URL("bulkcheck.db", FIXTURE), store);
    for (const setting of [
      ["max-task-size", "250"],
      ["min-task-size", "10"],
    ])
      expect((await e.run(["config", "set", ...setting])).code).toBe(0);

    // The run belongs to a service URL and a list path of the machine that made it: here they are this sandbox's and this list's.
    const command = { sourcePath: MADE_WITH.sourcePath, product: ACTIVITY, country: "GB" };
    const scope = { baseUrl: e.sandbox.url.replace(/\/$/, ""), profile: "default" };
    const db = new Database(store);
    const [run] = db.prepare("SELECT id, identity FROM runs").raw(true).all() as Array<[string, string]>;
    expect(run![1]).toBe(runIdentity({ baseUrl: MADE_WITH.baseUrl, profile: "default" }, command));
    db.prepare("UPDATE scopes SET base_url = ?").run([scope.baseUrl]);
    db.prepare("UPDATE runs SET identity = ?, source = json_set(source, '$.path', ?)").run([
      runIdentity(scope, { ...command, sourcePath: list }),
      list,
    ]);
    const parts = db.prepare("SELECT part, idempotency_key, sha256, task_id FROM tasks ORDER BY part").raw(true).all() as Array<
      [number, string, string, string | null]
    >;
    db.close();
    expect(parts.map(([part, , , taskId]) => [part, taskId !== null])).toEqual([
      [0, false],
      [1, true],
    ]);

    // The task that release created for part 1, under the key it wrote, from the same bytes (this service has it as that one had).
    const [, key, sha256] = parts[1]!;
    const upload = e.file(
      "part-1.txt",
      lines(readFileSync(list, "utf8"))
        .slice(250)
        .map((number) => `${identifier(number)}\n`)
        .join(""),
    );
    expect(createHash("sha256").update(readFileSync(upload)).digest("hex")).toBe(sha256);
    const client = createClient({ baseUrl: e.sandbox.url, apiKey: API_KEY });
    const { task } = await client.submitTask({ serviceType: ACTIVITY, country: "GB", file: upload, idempotencyKey: key });
    await client.close();

    const continued = await e.run([...submitAs(list, ACTIVITY, "GB", ...WAITING, "-o", "out.csv")]);
    expect(continued.code, continued.stderr).toBe(0);
    expect(continued.stderr).toContain(`Carrying on run ${run![0]}`);
    // Part 1 is the task already paid for; only part 0 is new: two tasks, not a new run's two more.
    expect(e.state().tasks.map((created) => created.id)).toContain(task.id);
    expect(e.state().tasks).toHaveLength(2);
    expect(lines(readFileSync(join(e.dir, "out.csv"), "utf8"))).toHaveLength(501);
  });
});
