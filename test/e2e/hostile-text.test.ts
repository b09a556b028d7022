import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FULL_TASK, sendEnvelope, startServer, type ScriptedServer } from "../api/scripted-server.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { oneTaskService } from "../helpers/results-fixtures.js";
import { API_KEY, e2eSandboxes, lines, submitAs } from "../helpers/sandbox.js";
import { bulkcheckCommand, startInTerminal, type TerminalOptions } from "../helpers/terminal.js";

/**
 * Issue 18, point 12: every string from the service or a file passes one sanitiser
 * (terminalText) before it reaches a terminal; files keep the data as it came.
 */
const sandbox = e2eSandboxes();
// Real processes in a pseudo-terminal: generous, for a machine busy with other work.
vi.setConfig({ testTimeout: 60_000 });
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const TITLE = "\u001b]0;pwned\u0007"; // sets the window title
const CLEAR = "\u001b[2J"; // clears the screen
const OVERRIDE = "\u202e"; // right-to-left override
const CSI = "\u009b"; // CSI as one C1 character

/** Runs the built binary in a pseudo-terminal wide enough for every column of a table. */
function runInWideTerminal(argv: readonly string[], options: TerminalOptions) {
  return startInTerminal(`stty cols 250 rows 50 && exec ${bulkcheckCommand(argv)}`, options).done;
}

/** What a terminal must never receive from bulkcheck: anything but its own colours and cursor moves. */
function expectInert(screen: string): void {
  expect(screen).not.toContain("\u001b]");
  expect(screen).not.toContain(CLEAR);
  expect(screen).not.toContain(OVERRIDE);
  expect(screen).not.toContain(CSI);
  expect(screen).not.toContain("\u0007");
}

async function hostileTaskService(): Promise<ScriptedServer> {
  const server = await startServer((req, res) =>
    sendEnvelope(req, res, {
      code: 0,
      data: { ...FULL_TASK, product: `number_validation_batch${TITLE}`, country: `GB${CLEAR}${OVERRIDE}${CSI}2J` },
    }),
  );
  closers.push(() => server.close());
  return server;
}

describe("text from the service or a file on a terminal", () => {
  it("shows a task's escape sequences as text in status's boxed table and in its table piped on, and keeps them as data in --json", async () => {
    const server = await hostileTaskService();
    const e = await sandbox();
    const env = { ...e.env, BULKCHECK_BASE_URL: server.origin, BULKCHECK_API_KEY: API_KEY };
    const { code, screen } = await runInWideTerminal(["status", FULL_TASK.id], { env, cwd: e.dir });
    expect(code, screen).toBe(0);
    expectInert(screen);
    expect(screen).toContain("\\x1b]0;pwned\\x07");
    expect(screen).toContain("\\x1b[2J\\u202e\\x9b2J");

    // `bulkcheck status | grep …`: the table, tab-separated, still ends on a terminal.
    const piped = await e.bin(["status", FULL_TASK.id], { env: { BULKCHECK_BASE_URL: server.origin } });
    expect(piped.code, piped.stderr).toBe(0);
    expectInert(piped.stdout);
    expect(lines(piped.stdout)[1]!.split("\t")).toEqual(expect.arrayContaining(["number_validation_batch\\x1b]0;pwned\\x07"]));

    const json = await e.bin(["status", FULL_TASK.id, "--json"], { env: { BULKCHECK_BASE_URL: server.origin } });
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).not.toContain(OVERRIDE);
    expect(json.stdout).not.toContain(CSI);
    expect(JSON.parse(lines(json.stdout)[0]!)).toMatchObject({
      product: `number_validation_batch${TITLE}`,
      country: `GB${CLEAR}${OVERRIDE}${CSI}2J`,
    });
  });

  it("takes a created_at that is no timestamp for the service's error, quoted as text", async () => {
    const server = await startServer((req, res) =>
      sendEnvelope(req, res, { code: 0, data: { ...FULL_TASK, created_at: `2030${TITLE}${CLEAR}` } }),
    );
    closers.push(() => server.close());
    const e = await sandbox();
    const out = await e.bin(["status", FULL_TASK.id], { env: { BULKCHECK_BASE_URL: server.origin } });
    expect(out.code).toBe(1);
    expectInert(out.stderr);
    expect(out.stderr).toContain("with a task whose created_at is not an ISO 8601 timestamp");
    expect(out.stdout).toBe("");
  });

  it.each([
    ["the local store", () => Promise.resolve({})],
    ["a team's store", async () => ({ BULKCHECK_STORE_URL: await createTestDatabase() })],
  ])(
    "takes a submitted task's created_at holding a NUL byte for the service's error on %s, the task kept and the store left sound",
    async (_, storeEnv) => {
      const server = await startServer((req, res) =>
        sendEnvelope(req, res, {
          code: 0,
          data: req.url?.endsWith("/balance") ? { balance_micros: 10_000_000 } : { ...FULL_TASK, created_at: "2030-01-01T12:00:00Z\0" },
        }),
      );
      closers.push(() => server.close());
      const e = await sandbox();
      const env = { ...(await storeEnv()), BULKCHECK_BASE_URL: server.origin };
      expect((await e.bin(["config", "set", "min-task-size", "1"], { env })).code).toBe(0);
      const list = e.file("list.txt", "+447400100001\n");
      const out = await e.bin(submitAs(list, "number_validation_batch", "GB", "--yes"), { env });
      // The service's fault, not bulkcheck's (exit 7, not 1); the task it created is named and kept (issue 34).
      expect(out.code).toBe(7);
      expect(out.stderr).toContain(
        `error: The service took the upload as task ${FULL_TASK.id}, but answered with a task whose created_at is not an ISO 8601 timestamp ("2030-01-01T12:00:00Z")`,
      );
      expect(out.stderr).not.toContain("bulkcheck bug");
      const open = await e.bin(["runs", "--state", "open", "--json"], { env });
      const [run] = (JSON.parse(open.stdout) as { runs: Array<{ id: string }> }).runs;
      const shown = await e.bin(["runs", "show", run!.id, "--json"], { env });
      expect((JSON.parse(shown.stdout) as { tasks: Array<{ task_id: string }> }).tasks.map((part) => part.task_id)).toEqual([FULL_TASK.id]);
      const check = await e.bin(["store", "check"], { env });
      expect(check.code, check.stderr).toBe(0);
    },
  );

  it("shows a carrier's escape sequences as text in Top carriers and in a boxed --format table, and writes them to a file as sent", async () => {
    const carrier = `Voda${TITLE}fone${CLEAR}`;
    const body = `identifier,carrier,underlying_carrier,number_type,country_code,region,city\n447400100001,"${carrier}",EE,mobile,GB,"Lon\ndon${OVERRIDE}",\n`;
    const service = await oneTaskService({ body, contentType: "text/csv", task: { product: "carrier_batch", total: 1, success_cnt: 1 } });
    closers.push(service.close);
    const e = await sandbox();
    const env = { ...e.env, BULKCHECK_BASE_URL: service.url };
    const table = await runInWideTerminal(["download", service.id, "--format", "table"], { env, cwd: e.dir });
    expect(table.code, table.screen).toBe(0);
    expectInert(table.screen);
    expect(table.screen).toContain("Top carriers: Voda\\x1b]0;pwned\\x07fone\\x1b[2J 1");
    expect(table.screen).toMatch(/│ Voda\\x1b]0;pwned\\x07fone\\x1b\[2J\s*│/);
    expect(table.screen).toContain("Lon don\\u202e");
    // bulkcheck's own colours are untouched.
    expect(table.screen).toContain("\u001b[1m\u001b[36midentifier\u001b[39m\u001b[22m");

    const csvOnTerminal = await runInWideTerminal(["download", service.id], { env, cwd: e.dir });
    expect(csvOnTerminal.code, csvOnTerminal.screen).toBe(0);
    expectInert(csvOnTerminal.screen);
    expect(csvOnTerminal.screen).toContain("447400100001,Voda\\x1b]0;pwned\\x07fone\\x1b[2J,EE,");

    const file = await e.bin(["download", service.id, "-o", "results.csv"], { env: { BULKCHECK_BASE_URL: service.url } });
    expect(file.code, file.stderr).toBe(0);
    expectInert(file.stderr);
    expect(readFileSync(join(e.dir, "results.csv"), "utf8")).toContain(`447400100001,${carrier},EE,`);
  });

  it("neutralises a carrier's escape sequences in a --format table piped or written to a file, which --format tsv keeps as data (issue 35, point 5)", async () => {
    const carrier = `Holdout${TITLE}${CLEAR}Mobile`;
    const body = `identifier,carrier,underlying_carrier,number_type,country_code,region,city\n447400100001,"${carrier}",EE,mobile,GB,"Lon\ndon${OVERRIDE}",\n`;
    const service = await oneTaskService({ body, contentType: "text/csv", task: { product: "carrier_batch", total: 1, success_cnt: 1 } });
    closers.push(service.close);
    const e = await sandbox();
    const env = { BULKCHECK_BASE_URL: service.url };
    const [piped, filed, tsv] = await Promise.all([
      e.bin(["download", service.id, "--format", "table"], { env }),
      e.bin(["download", service.id, "--format", "table", "-o", "table.txt"], { env }),
      e.bin(["download", service.id, "--format", "tsv"], { env }),
    ]);
    for (const out of [piped, filed, tsv]) expect(out.code, out.stderr).toBe(0);
    const row = "447400100001\tHoldout\\x1b]0;pwned\\x07\\x1b[2JMobile\tEE\tmobile\tGB\tLon don\\u202e\t\n";
    for (const table of [piped.stdout, readFileSync(join(e.dir, "table.txt"), "utf8")]) {
      expectInert(table);
      expect(lines(table)).toHaveLength(2);
      expect(table).toContain(row);
    }
    expect(piped.stderr).toContain("Wrote 1 rows (tsv).");
    // Data asked for as data stays as it came.
    expect(tsv.stdout).toContain(`447400100001\t${carrier}\tEE`);
  });

  it("shows a CSV header name's escape sequences as text where it names the column it reads", async () => {
    const e = await sandbox();
    const list = e.file("list.csv", `"ph${CLEAR}one\n${TITLE}"\n+44 7400 100001\n`);
    const out = await e.bin(["validate", list, "--country", "GB"]);
    expect(out.code, out.stderr).toBe(0);
    expectInert(out.stderr);
    expect(out.stderr).toContain('Reading phone numbers from column 1 "ph\\x1b[2Jone\\x0a\\x1b]0;pwned\\x07"');
  });

  it("shows a service's error message with escape sequences as text", async () => {
    const server = await startServer((req, res) => sendEnvelope(req, res, { code: 40100, msg: `bad key${TITLE}${OVERRIDE}` }, 401));
    closers.push(() => server.close());
    const e = await sandbox();
    const env = { ...e.env, BULKCHECK_BASE_URL: server.origin };
    const { code, screen } = await runInWideTerminal(["balance"], { env, cwd: e.dir });
    expect(code, screen).toBe(4);
    expectInert(screen);
    expect(screen).toContain("bad key");
  });
});
