import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { createClient } from "../../src/api/client.js";
import { ownLease } from "../../src/run/lease.js";
import type { RunEvent } from "../../src/run/submit-request.js";
import { submitRun } from "../../src/run/submit-run.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { tempDir } from "../helpers/cli.js";
import { gbList, identifier, listText } from "../helpers/sandbox.js";
import { closedAfterEach, gbRunRequest, inProcessRunDeps } from "../helpers/in-process-run.js";

const KEY = "sk_run_test_key_0123456789";
const opened = closedAfterEach();

describe("a run whose numbers another run claimed between its plan and its claim", () => {
  it("plans again, takes those numbers as in flight, and uploads only the rest", async () => {
    const sandbox: Sandbox = await startSandbox({ apiKey: KEY, noResultRate: 0 });
    opened.push(sandbox);
    const dir = tempDir();
    const store = SqliteStore.open(join(dir, "bulkcheck.db"));
    opened.push(store);
    const client = createClient({ baseUrl: sandbox.url, apiKey: KEY });
    opened.push(client);
    const list = join(dir, "list.txt");
    writeFileSync(list, listText(1000));
    const scope = { baseUrl: sandbox.url.replace(/\/$/, ""), profile: "default" };
    const claimed = gbList(500).map((number) => Number(identifier(number)));
    const events: RunEvent[] = [];
    const outcome = await submitRun(
      gbRunRequest(list, "number_activity_batch", false),
      inProcessRunDeps(
        { store, scope, client, product: "number_activity_batch", workDir: dir },
        {
          async confirm() {
            // Asked after the first plan, before the claim: meanwhile a run of another list, alive in this
            // process, claims the first 500 numbers (its part written, its upload not yet answered).
            if (events.filter((event) => event.type === "plan").length === 1) {
              await store.runs.create(
                {
                  id: "other-run",
                  scope,
                  identity: "another list",
                  kind: "submit",
                  state: "open",
                  startedAt: new Date().toISOString(),
                  product: "number_activity_batch",
                  source: {},
                  settings: {},
                },
                ownLease(),
              );
              const part = await store.tasks.add({
                scope,
                runId: "other-run",
                product: "number_activity_batch",
                idempotencyKey: "other-part",
                count: claimed.length,
                submittedAt: new Date().toISOString(),
              });
              await store.tasks.addNumbers(part.ref, claimed);
            }
            return true;
          },
          onEvent: (event) => events.push(event),
        },
      ),
    );
    expect(events.map((event) => event.type).filter((type) => type !== "schedule")).toEqual(["plan", "claimed meanwhile", "plan", "task"]);
    expect(outcome?.plan).toMatchObject({ kept: 1000, inFlight: { numbers: 500, tasks: [{ runId: "other-run" }] } });
    const [task] = sandbox.inspect().tasks;
    expect(sandbox.inspect().tasks).toHaveLength(1);
    expect(sandbox.uploadedLines(task!.id)).toEqual(gbList(1000).slice(500).map(identifier));
    await outcome?.lease.release();
  });
});
