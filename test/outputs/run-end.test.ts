import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/client.js";
import type { OutputEvent } from "../../src/outputs/output-files.js";
import type { OutputsRequest } from "../../src/outputs/outputs-request.js";
import { endRun, type RunEndEvent } from "../../src/outputs/run-end.js";
import { RunOutputs } from "../../src/outputs/run-outputs.js";
import { submitRun } from "../../src/run/submit-run.js";
import { startSandbox } from "../../src/sandbox/index.js";
import { DEFAULT_PRICE_MICROS } from "../../src/spec/products.js";
import { openStore } from "../../src/store/open.js";
import { taskOrigins } from "../../src/tasks/origins.js";
import { tempDir } from "../helpers/cli.js";
import { gbList, identifier, listText } from "../helpers/sandbox.js";
import { closedAfterEach, gbRunRequest, inProcessRunDeps, shortSleep } from "../helpers/in-process-run.js";

const KEY = "sk_run_end_test_key_0123456789";
const opened = closedAfterEach();

describe("a run ended by the library, without the command line", () => {
  it("writes the merged output and the changes, finishes the run with where its output went, and removes its staging", async () => {
    const sandbox = await startSandbox({ apiKey: KEY, noResultRate: 0, minTaskSize: 1 });
    opened.push(sandbox);
    const dir = tempDir();
    const stateDir = join(dir, "state");
    const store = await openStore(join(stateDir, "bulkcheck.db"), {});
    opened.push(store);
    const client = createClient({ baseUrl: sandbox.url, apiKey: KEY });
    opened.push(client);
    const list = join(dir, "list.txt");
    writeFileSync(list, listText(40));
    const scope = { baseUrl: sandbox.url.replace(/\/$/, ""), profile: "default" };
    const product = "number_activity_batch";
    const deps = inProcessRunDeps({ store, scope, client, product, workDir: dir, minTaskSize: 1 });
    const { signal, recording } = deps;
    const outputs = new RunOutputs({
      store,
      scope,
      client: () => Promise.resolve(client),
      product,
      ledger: true,
      stateDir,
      now: Date.now,
      sleep: shortSleep,
      signal,
      recording,
      onEvent: () => undefined,
    });
    const outcome = await submitRun(gbRunRequest(list, product, true), {
      ...deps,
      onSucceeded: (result, run) => outputs.stage(result, run),
    });
    expect(outcome).toBeDefined();
    const out = join(dir, "out.csv");
    const request: OutputsRequest = { wait: true, ledger: true, output: { path: out, format: "csv" }, countChanges: true, force: false };
    const events: Array<RunEndEvent | OutputEvent> = [];
    const checked: string[] = [];
    await endRun(
      outcome!,
      request,
      { path: out },
      {
        outputs,
        download: {
          client: () => Promise.resolve(client),
          origins: (ids) => taskOrigins(store, scope, ids),
          sleep: shortSleep,
          signal,
        },
        store,
        scope,
        now: Date.now,
        prices: DEFAULT_PRICE_MICROS,
        absolute: (path) => path,
        stage: (output, produce) => produce(output!, undefined),
        writeStdout: () => expect.fail("nothing goes to stdout"),
        table: { colour: false, terminal: false },
        checkDestinations: (written) => {
          checked.push(...Object.values(written).filter((path) => path !== undefined));
          return Promise.resolve();
        },
        onEvent: (event) => events.push(event),
      },
    );
    const [header, ...rows] = readFileSync(out, "utf8").trim().split("\n");
    expect(header).toBe("identifier,activated,checked_at");
    expect(rows.map((row) => row.split(",")[0]).sort()).toEqual(gbList(40).map(identifier).sort());
    expect(events.map((event) => event.type)).toEqual(["changes", "merged"]);
    expect(events[0]).toMatchObject({ type: "changes", summary: { compared: 0 } });
    expect(checked).toEqual([out]);
    const run = await store.runs.get(outcome!.run.id);
    expect(run).toMatchObject({ state: "finished", output: { path: out } });
    expect(run?.lease).toBeUndefined();
    // Its results are in the ledger, and its staging is gone.
    expect((await store.ledger.stats()).results).toBe(40);
    expect(existsSync(join(stateDir, "staging")) ? readdirSync(join(stateDir, "staging")) : []).toEqual([]);
  });
});
