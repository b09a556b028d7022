import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/client.js";
import { resolveLimits } from "../../src/config/resolve.js";
import { runIdentity, type RunCommand } from "../../src/run/identity.js";
import { ownLease } from "../../src/run/lease.js";
import type { RunEvent } from "../../src/run/submit-request.js";
import { submitRun } from "../../src/run/submit-run.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { tempDir } from "../helpers/cli.js";
import { listText } from "../helpers/sandbox.js";
import { ResultRecording } from "../../src/ledger/recording.js";

const KEY = "sk_run_test_key_0123456789";
const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const thing of opened.splice(0).reverse()) await thing.close();
});

describe("a run planned while another process ran the same command to its end", () => {
  it("plans again with what that run left in the ledger instead of paying for its numbers a second time", async () => {
    const sandbox: Sandbox = await startSandbox({ apiKey: KEY, noResultRate: 0 });
    opened.push(sandbox);
    const dir = tempDir();
    const store = SqliteStore.open(join(dir, "bulkcheck.db"));
    opened.push(store);
    const client = createClient({ baseUrl: sandbox.url, apiKey: KEY });
    opened.push(client);
    const list = join(dir, "list.txt");
    writeFileSync(list, listText(500));
    const scope = { baseUrl: sandbox.url.replace(/\/$/, ""), profile: "default" };
    const command: RunCommand = { sourcePath: list, product: "number_activity_batch", country: "GB" };
    const plans: RunEvent[] = [];
    const outcome = await submitRun(
      {
        command,
        product: "number_activity_batch",
        country: "GB",
        prepare: { source: list, country: "GB" },
        dryRun: false,
        maxAgeMs: 3_600_000,
        ledger: true,
        pad: "oldest",
        retryNoResult: false,
        countUnanswered: true,
        wait: false,
        pollIntervalMs: 1000,
        resumeCommand: "bulkcheck submit list.txt",
      },
      {
        store,
        scope,
        client: () => Promise.resolve(client),
        limits: resolveLimits({}),
        priceMicros: 3000,
        workDir: dir,
        lease: ownLease(),
        now: Date.now,
        sleep: () => Promise.resolve(),
        random: Math.random,
        signal: new AbortController().signal,
        recording: new ResultRecording({ location: store.location, env: {}, now: Date.now, signal: new AbortController().signal }),
        onEvent(event) {
          if (event.type !== "plan") return;
          plans.push(event);
          // Between this process's plan and its run: another process ran the same command from start to end.
          if (plans.length === 1) {
            const now = new Date().toISOString();
            void store.runs
              .create(
                {
                  id: "other-run",
                  scope,
                  identity: runIdentity(scope, command),
                  kind: "submit",
                  state: "open",
                  startedAt: now,
                  product: "number_activity_batch",
                  source: { path: list },
                  settings: {},
                },
                { host: "elsewhere", pid: 1, nonce: "n" },
              )
              .then(() => store.runs.update("other-run", { state: "finished", finishedAt: new Date(Date.now() + 1).toISOString() }));
          }
        },
      },
    );
    expect(plans).toHaveLength(2);
    const runs = await store.runs.list({ scope });
    const overtaken = runs.find((run) => run.state === "abandoned");
    expect(overtaken?.note).toContain("other-run");
    expect(await store.tasks.ofRun(overtaken!.id)).toEqual([]);
    expect(outcome?.run.id).not.toBe(overtaken!.id);
    expect(sandbox.inspect().tasks).toHaveLength(1);
    await outcome?.lease.release();
  });
});
