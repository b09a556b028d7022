import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { e2eSandboxes, gbList, identifier, lines, listText, until, WAITING, type E2e } from "../helpers/sandbox.js";
import { runInTerminal } from "../helpers/terminal.js";
import { hashUnit } from "../../src/sandbox/random.js";
import { tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { readWorkbook } from "../helpers/xlsx.js";

/**
 * Several products in one run (`submit --then`): the later product is bought on exactly the
 * numbers its condition selects from the earlier product's results, as the sandbox's own
 * tasks and result files show; a re-run buys nothing; a run killed between products carries
 * on without paying twice; the output has one row per source row with both products' columns.
 */
const sandbox = e2eSandboxes();

const MOBILES = "number_activity_batch:number_type=mobile";

/** carrier_batch's columns after `identifier`, and the later product's as a chain names them. */
const CARRIER = ["carrier", "underlying_carrier", "number_type", "country_code", "region", "city"];
const ACTIVITY = ["activity_activated", "activity_status", "activity_checked_at"];

/** A sandbox taking tasks of any size, and a CLI told so. */
async function smallTasks(
  options: { numbersPerSecond?: number; fakeClock?: boolean; failRate?: number; seed?: number; drift?: number } = {},
): Promise<E2e> {
  const e = await sandbox({ minTaskSize: 1, ...options });
  expect((await e.run(["config", "set", "min-task-size", "1"])).code).toBe(0);
  return e;
}

/** A CRM list of `mobiles` GB mobiles and `landlines` London numbers, mixed, with a name column. */
function mixedList(e: E2e, name: string, mobiles: number, landlines: number): { path: string; numbers: string[] } {
  const mobile = gbList(mobiles);
  const fixed = Array.from({ length: landlines }, (_, i) => `+44 20 7${String(2_000_000 + i)}`);
  const numbers = [...mobile, ...fixed].sort((a, b) => (a.slice(-3) < b.slice(-3) ? -1 : 1));
  const text = ["name,phone", ...numbers.map((number, i) => `Contact ${i},${number}`)].join("\n") + "\n";
  return { path: e.file(name, text), numbers };
}

function chainArgs(file: string, ...extra: string[]): string[] {
  return ["submit", file, "--type", "carrier_batch", "--country", "GB", "--then", MOBILES, ...extra];
}

/** A task's result rows at the service (its own file, fetched by its result_url): identifier → column → value. */
async function serviceResult(e: E2e, taskId: string): Promise<Map<string, Record<string, string>>> {
  const task = e.state().tasks.find((candidate) => candidate.id === taskId)!;
  const text = await (await fetch(task.result_url!)).text();
  const [header, ...rows] = lines(text).map((line) => line.split(","));
  return new Map(rows.map((row) => [row[0]!, Object.fromEntries(header!.map((column, i) => [column, row[i] ?? ""]))]));
}

/** The sandbox's tasks of a product. */
function tasksOf(e: E2e, product: string) {
  return e.state().tasks.filter((task) => task.product === product);
}

/** A CSV written by the join or the merged output, as objects by header name (no field here holds a comma). */
function csvObjects(e: E2e, name: string): Record<string, string>[] {
  const [header, ...rows] = lines(readFileSync(join(e.dir, name), "utf8")).map((line) => line.split(","));
  return rows.map((row) => Object.fromEntries(header!.map((column, i) => [column, row[i] ?? ""])));
}

/** A sandbox taking tasks of at most 20 numbers (mixedList's 60 are three), `maxUnfinished` unfinished at once, and a CLI told so. */
async function threeParts(maxUnfinished: number, numbersPerSecond: number): Promise<E2e> {
  const e = await sandbox({ minTaskSize: 1, maxTaskSize: 20, maxUnfinished, numbersPerSecond, fakeClock: false });
  for (const [key, value] of [
    ["min-task-size", "1"],
    ["max-task-size", "20"],
  ])
    expect((await e.run(["config", "set", key!, value!])).code).toBe(0);
  return e;
}

/** Every number a carrier task's own result says is mobile. */
async function allMobiles(e: E2e): Promise<Set<string>> {
  const mobiles = new Set<string>();
  for (const task of tasksOf(e, "carrier_batch"))
    for (const row of (await serviceResult(e, task.id)).values()) if (row.number_type === "mobile") mobiles.add(row.identifier!);
  return mobiles;
}

/** What the carrier task's result says is mobile: the numbers the condition selects. */
async function mobilesByService(e: E2e): Promise<string[]> {
  const [carrier] = tasksOf(e, "carrier_batch");
  const rows = await serviceResult(e, carrier!.id);
  return [...rows.values()].filter((row) => row.number_type === "mobile").map((row) => row.identifier!);
}

describe("submit --then: a later product on the numbers an earlier one selects", () => {
  it("buys the later product on exactly the numbers whose carrier result says mobile, joins both, and a re-run buys nothing", async () => {
    const e = await sandbox({ minTaskSize: 500, noResultRate: 0.05 });
    const { path } = mixedList(e, "crm.csv", 900, 300);
    const out = await e.run(chainArgs(path, ...WAITING, "--join", "-o", "out.csv"));
    expect(out.code, out.stderr).toBe(0);

    const [carrier] = tasksOf(e, "carrier_batch");
    const [activity] = tasksOf(e, "number_activity_batch");
    expect(tasksOf(e, "carrier_batch")).toHaveLength(1);
    expect(tasksOf(e, "number_activity_batch")).toHaveLength(1);
    expect(carrier!.total).toBe(1200);
    const mobiles = await mobilesByService(e);
    // Some mobiles have no carrier result (the miss rate): they are not bought either.
    expect(mobiles.length).toBeGreaterThan(500);
    expect(mobiles.length).toBeLessThan(900);
    expect([...e.sandbox.uploadedLines(activity!.id)!].sort()).toEqual([...mobiles].sort());
    expect(out.stderr).toContain(
      `Then number_activity_batch where carrier_batch says number_type=mobile: ${mobiles.length} of 1,200 numbers`,
    );
    expect(out.stderr).toContain("Wrote 1,200 source rows to out.csv with the carrier_batch and number_activity_batch columns: checked ");

    const rows = csvObjects(e, "out.csv");
    expect(rows).toHaveLength(1200);
    expect(Object.keys(rows[0]!)).toEqual(["name", "phone", "identifier", ...CARRIER, "bulkcheck_status", "bc_checked_at", ...ACTIVITY]);
    const activityRows = await serviceResult(e, activity!.id);
    const selected = new Set(mobiles);
    for (const row of rows) {
      const id = row.identifier!;
      if (!selected.has(id)) {
        expect(row.activity_status, id).toBe(row.bulkcheck_status === "checked" ? "not_selected" : "no_earlier_result");
        expect(row.activity_activated).toBe("");
      } else if (activityRows.has(id)) {
        expect(row.activity_status).toBe("checked");
        expect(row.activity_activated).toBe(activityRows.get(id)!.activated);
        expect(row.activity_checked_at).not.toBe("");
      } else {
        expect(row.activity_status).toBe("no_result");
      }
    }
    expect(rows.filter((row) => row.number_type === "fixed_line").every((row) => row.activity_status === "not_selected")).toBe(true);

    // The same chain again: both products' results are fresh in the ledger, so nothing is bought.
    const again = await e.run(chainArgs(path, ...WAITING, "--join", "-o", "again.csv"));
    expect(again.code, again.stderr).toBe(0);
    expect(e.state().tasks).toHaveLength(2);
    const reused = csvObjects(e, "again.csv");
    expect(reused.filter((row) => row.activity_status === "reused")).toHaveLength(activityRows.size);
    expect(reused.map((row) => row.activity_activated)).toEqual(rows.map((row) => row.activity_activated));
  });

  it("buys nothing more when the condition selects no number, and says so in every row", async () => {
    const e = await smallTasks();
    const { path } = mixedList(e, "crm.csv", 0, 30);
    const out = await e.run(chainArgs(path, ...WAITING, "--join", "-o", "out.csv"));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain(
      "Then number_activity_batch where carrier_batch says number_type=mobile: 0 of 30 numbers; the condition spares 30",
    );
    expect(tasksOf(e, "number_activity_batch")).toHaveLength(0);
    expect(csvObjects(e, "out.csv").map((row) => row.activity_status)).toEqual(new Array(30).fill("not_selected"));
  });

  it("writes every product's columns into a merged file, and says each product's plan, cost and tasks in --json", async () => {
    const e = await smallTasks();
    const { path } = mixedList(e, "crm.csv", 40, 20);
    const out = await e.run(chainArgs(path, ...WAITING, "-o", "merged.csv", "--json"));
    expect(out.code, out.stderr).toBe(0);
    // Before anything is uploaded, the later product's upper bound: its plan on every number.
    const bound = out.stderr.indexOf("Then number_activity_batch where carrier_batch says number_type=mobile: at most 60 numbers");
    expect(bound).toBeGreaterThan(-1);
    expect(out.stderr.indexOf("Plan: 60 numbers in 1 task(s) of number_activity_batch for GB; reservation $0.18", bound)).toBeGreaterThan(
      bound,
    );
    expect(out.stderr.indexOf("Plan: 60 numbers in 1 task(s) of number_activity_batch")).toBeLessThan(
      out.stderr.indexOf("Then number_activity_batch where carrier_batch says number_type=mobile: 40 of 60 numbers"),
    );
    const rows = csvObjects(e, "merged.csv");
    expect(rows).toHaveLength(60);
    expect(Object.keys(rows[0]!)).toEqual(["identifier", ...CARRIER, "checked_at", ...ACTIVITY]);
    expect(rows.filter((row) => row.activity_status === "checked")).toHaveLength(40);
    expect(rows.filter((row) => row.activity_status === "not_selected")).toHaveLength(20);
    const objects = lines(out.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
    const run = objects.find((object) => object.type === "run")!;
    expect(objects.find((object) => object.type === "output")).toMatchObject({
      run: run.run,
      rows_written: 60,
      path: join(e.dir, "merged.csv"),
      format: "csv",
      columns: Object.keys(rows[0]!),
    });
    const [activity] = tasksOf(e, "number_activity_batch");
    expect(run).toMatchObject({
      product: "carrier_batch",
      kept: 60,
      uploaded: 60,
      then: [
        {
          product: "number_activity_batch",
          condition: { product: "carrier_batch", column: "number_type", values: ["mobile"] },
          kept: 40,
          uploaded: 40,
          tasks: [activity!.id],
          reservation_micros: 40 * 3000,
        },
      ],
    });
    expect(out.stderr).toContain("number_activity_batch (40 numbers): Checked 40, no result 0. Charged $0.12; refunded $0.00.");

    // Each product's run keeps the whole chain: runs show names both runs, and what each kept, uploaded and cost.
    const later = run.then as Array<Record<string, unknown>>;
    const shown = await e.run(["runs", "show", String(later[0]!.run), "--json"]);
    expect(shown.code, shown.stderr).toBe(0);
    const details = JSON.parse(shown.stdout) as { run: Record<string, unknown> };
    expect(details.run).toMatchObject({
      product: "number_activity_batch",
      kept: 40,
      uploaded: 40,
      charged_micros: 40 * 3000,
      chain: [
        { product: "carrier_batch", run: run.run },
        { product: "number_activity_batch", run: later[0]!.run, condition: MOBILES },
      ],
    });
    const text = await e.run(["runs", "show", String(run.run)]);
    expect(text.stderr).toContain(
      `chain                   carrier_batch (run ${String(run.run)}) → ${MOBILES} (run ${String(later[0]!.run)})`,
    );
  });

  it("shows each product's plan in a dry run, the later one as an upper bound, and buys nothing", async () => {
    const e = await smallTasks();
    const { path } = mixedList(e, "crm.csv", 40, 20);
    const out = await e.run(chainArgs(path, "--dry-run"));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("Plan: 60 numbers in 1 task(s) of carrier_batch for GB; reservation $0.06");
    expect(out.stderr).toContain(
      "Then number_activity_batch where carrier_batch says number_type=mobile: at most 60 numbers; its plan below is an upper bound",
    );
    expect(out.stderr).toContain("Plan: 60 numbers in 1 task(s) of number_activity_batch for GB; reservation $0.18");
    expect(e.state().tasks).toHaveLength(0);
  });

  it.each([
    [
      ["--then", "number_activity_batch:carrier_name=EE", ...WAITING],
      /no product before number_activity_batch in this chain has a column "carrier_name"/,
    ],
    [["--then", MOBILES, "--yes"], /--then needs --wait/],
    [["--then", MOBILES, ...WAITING, "--idempotency-key", "k1"], /--idempotency-key names one product's tasks/],
  ])("refuses %j as a usage error, before the list is read", async (extra, message) => {
    const e = await smallTasks();
    // The list does not exist: the flags are refused first.
    const out = await e.run(["submit", join(e.dir, "missing.csv"), "--type", "carrier_batch", "--country", "GB", ...extra]);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(message);
    expect(e.state().tasks).toHaveLength(0);
  });

  it("refuses a later product that needs a country when the chain has none", async () => {
    const e = await smallTasks();
    const out = await e.run(["submit", join(e.dir, "missing.csv"), "--type", "carrier_batch", "--then", MOBILES, ...WAITING]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("--then number_activity_batch needs --country");
  });
});

describe("the money of a chain", () => {
  it("counts the later products' upper bound in --max-cost, and refuses before anything is bought", async () => {
    const e = await smallTasks();
    const { path } = mixedList(e, "crm.csv", 40, 20);
    // $0.06 of carriers, and up to $0.18 of activity on every number: over $0.10, though the mobiles alone would fit.
    const out = await e.run(chainArgs(path, ...WAITING, "--max-cost", "0.10"));
    expect(out.code).toBe(5);
    expect(out.stderr).toContain("The reservation $0.06 with up to $0.18 for the later products of the chain is over --max-cost $0.10.");
    expect(e.state().tasks).toHaveLength(0);
    const within = await e.run(chainArgs(path, ...WAITING, "--max-cost", "0.24"));
    expect(within.code, within.stderr).toBe(0);
    expect(tasksOf(e, "number_activity_batch")).toHaveLength(1);
  });

  it("asks once at a terminal, for the first product's reservation and the later products' upper bound", async () => {
    const e = await smallTasks({ fakeClock: false, numbersPerSecond: 1000 });
    const { path } = mixedList(e, "crm.csv", 40, 20);
    const out = await runInTerminal(chainArgs(path, "--wait", "--interval", "0.2", "-o", "out.csv"), {
      env: e.env,
      cwd: e.dir,
      keys: [{ after: "[y/N]", send: "y\r" }],
    });
    expect(out.code, out.screen).toBe(0);
    expect(out.screen).toContain("Reserve $0.06, then up to $0.18 for the later products once their numbers are known, of $");
    expect(out.screen.match(/\[y\/N\]/g)).toHaveLength(1);
    expect(tasksOf(e, "number_activity_batch")).toHaveLength(1);
  });

  it("asks again when a later product's reservation is over its upper bound (the ledger results the bound counted aged meanwhile)", async () => {
    const e = await smallTasks({ fakeClock: false, numbersPerSecond: 10 });
    const { path } = mixedList(e, "crm.csv", 40, 20);
    // The mobiles' activity checked a moment ago: fresh within --max-age 6s when the chain plans its bound, not once
    // its carrier task (60 numbers at 10 a second) has finished.
    const mobiles = e.file("mobiles.txt", gbList(40).join("\n") + "\n");
    const before = await e.run(["submit", mobiles, "--type", "number_activity_batch", "--country", "GB", ...WAITING]);
    expect(before.code, before.stderr).toBe(0);
    const out = await runInTerminal(chainArgs(path, "--wait", "--interval", "0.2", "--max-age", "6s", "-o", "out.csv"), {
      env: e.env,
      cwd: e.dir,
      keys: [
        { after: "for the later products once their numbers are known", send: "y\r" },
        { after: "Reserve $0.12 of", send: "y\r" },
      ],
    });
    expect(out.code, out.screen).toBe(0);
    expect(out.screen).toContain("Reserve $0.06, then up to $0.06 for the later products once their numbers are known, of $");
    expect(out.screen).toMatch(/Reserve \$0\.12 of \$[\d.]+\? \[y\/N\]/);
    const [, chained] = tasksOf(e, "number_activity_batch");
    expect(e.sandbox.uploadedLines(chained!.id)).toHaveLength(40);
  }, 60_000);

  it("lets a later product's numbers wait when its condition selects fewer than a task's minimum", async () => {
    const e = await sandbox({ minTaskSize: 500 });
    const { path } = mixedList(e, "crm.csv", 300, 300);
    const out = await e.run(chainArgs(path, ...WAITING, "--join", "-o", "out.csv"));
    expect(out.code, out.stderr).toBe(0);
    expect(tasksOf(e, "carrier_batch")).toHaveLength(1);
    expect(tasksOf(e, "number_activity_batch")).toHaveLength(0);
    const rows = csvObjects(e, "out.csv");
    expect(rows.filter((row) => row.number_type === "mobile").every((row) => row.activity_status === "waiting")).toBe(true);
    expect(rows.filter((row) => row.number_type === "fixed_line").every((row) => row.activity_status === "not_selected")).toBe(true);
  });
});

describe("a later product bought part by part", () => {
  it("starts on the first parts' numbers while the first product's last task is still processing, pays once, and says checked", async () => {
    // Three carrier tasks of 20, two unfinished at a time: the third starts once the first two have finished.
    const e = await threeParts(2, 10);
    const { path } = mixedList(e, "crm.csv", 40, 20);
    const chain = e.spawn(chainArgs(path, ...WAITING, "--join", "-o", "out.csv", "--json"));
    await until(() => tasksOf(e, "number_activity_batch").length > 0, 30_000);
    const carriersThen = tasksOf(e, "carrier_batch").map((task) => task.status);
    const out = await chain.done;
    expect(out.code, out.stderr).toBe(0);
    expect(carriersThen, "an activity task was made before the last carrier task finished").toContain("processing");

    const carriers = tasksOf(e, "carrier_batch");
    expect(carriers).toHaveLength(3);
    const mobiles = await allMobiles(e);
    const activity = tasksOf(e, "number_activity_batch");
    expect(activity.length).toBeGreaterThan(1);
    const uploaded = activity.flatMap((task) => e.sandbox.uploadedLines(task.id)!);
    expect(uploaded.length, "a number bought twice").toBe(new Set(uploaded).size);
    expect(new Set(uploaded)).toEqual(mobiles);
    expect(out.stderr).toMatch(
      /Then number_activity_batch where carrier_batch says number_type=mobile, part by part: parts 1 of 3 of the list are checked, and select \d+ numbers/,
    );
    expect(out.stderr).toContain(`number_activity_batch (${mobiles.size} numbers): Checked ${mobiles.size}, no result 0.`);
    expect(out.stderr).not.toContain("Reused from the ledger");

    const rows = csvObjects(e, "out.csv");
    expect(rows.filter((row) => mobiles.has(row.identifier!)).every((row) => row.activity_status === "checked")).toBe(true);
    expect(rows.filter((row) => !mobiles.has(row.identifier!)).every((row) => row.activity_status === "not_selected")).toBe(true);
    const run = lines(out.stdout)
      .map((line) => JSON.parse(line) as { type: string; then?: Array<{ part_by_part: Array<{ parts: string; tasks: string[] }> }> })
      .find((object) => object.type === "run")!;
    const early = run.then![0]!.part_by_part;
    expect(early.length).toBeGreaterThan(0);
    expect(early[0]!.parts).toBe("1 of 3");

    // Every run of the chain ends with it, and the same chain again buys nothing.
    const open = await e.run(["runs", "--state", "open", "--json"]);
    expect((JSON.parse(open.stdout) as { runs: unknown[] }).runs).toEqual([]);
    const again = await e.run(chainArgs(path, ...WAITING, "--join", "-o", "again.csv"));
    expect(again.code, again.stderr).toBe(0);
    expect(e.state().tasks).toHaveLength(3 + activity.length);
    expect(csvObjects(e, "again.csv").filter((row) => row.activity_status === "reused")).toHaveLength(mobiles.size);
  }, 90_000);
});

describe("a later product bought part by part where what is left selects fewer than a task's minimum", () => {
  it("checks the whole selection in the chain's run instead, the group's results reused and only what it pads paid again", async () => {
    // Tasks of 10 to 20 numbers, two unfinished at a time: part 1 all mobiles (a group of its own), parts 2 and 3 four each among landlines.
    const e = await sandbox({ minTaskSize: 10, maxTaskSize: 20, maxUnfinished: 2, numbersPerSecond: 10, fakeClock: false });
    for (const [key, value] of [
      ["min-task-size", "10"],
      ["max-task-size", "20"],
    ])
      expect((await e.run(["config", "set", key!, value!])).code).toBe(0);
    const mobiles = gbList(28);
    const landlines = Array.from({ length: 32 }, (_, i) => `+44 20 7${String(3_000_000 + i)}`);
    const numbers = [
      ...mobiles.slice(0, 20),
      ...mobiles.slice(20, 24),
      ...landlines.slice(0, 16),
      ...mobiles.slice(24),
      ...landlines.slice(16),
    ];
    const path = e.file("crm.csv", ["phone", ...numbers].join("\n") + "\n");
    const out = await e.run(chainArgs(path, ...WAITING, "-o", "out.csv", "--json"));
    expect(out.code, out.stderr).toBe(0);

    const run = lines(out.stdout)
      .map((line) => JSON.parse(line) as { type: string; then?: Array<{ part_by_part: Array<{ parts: string }> }> })
      .find((object) => object.type === "run")!;
    expect(run.then![0]!.part_by_part.map((group) => group.parts)).toEqual(["1 of 3"]);
    const [group, last] = tasksOf(e, "number_activity_batch");
    const early = e.sandbox.uploadedLines(group!.id)!;
    expect(new Set(early)).toEqual(new Set(mobiles.slice(0, 20).map(identifier)));
    // The chain's run: the 8 mobiles of parts 2 and 3, padded to the task minimum with 2 results the group bought.
    const final = e.sandbox.uploadedLines(last!.id)!;
    expect(final).toHaveLength(10);
    expect(final).toEqual(expect.arrayContaining(mobiles.slice(20).map(identifier)));
    expect(final.filter((number) => early.includes(number))).toHaveLength(2);
    expect(tasksOf(e, "number_activity_batch")).toHaveLength(2);
    const rows = csvObjects(e, "out.csv");
    expect(rows.filter((row) => row.activity_activated !== undefined && row.activity_activated !== "")).toHaveLength(28);
  }, 90_000);
});

describe("a later product bought part by part at a service with room for one unfinished task", () => {
  it("waits for the room the first product's tasks hold (42900), and still buys each number once per product", async () => {
    const e = await threeParts(1, 20);
    const { path } = mixedList(e, "crm.csv", 40, 20);
    const out = await e.run(chainArgs(path, ...WAITING, "-o", "out.csv", "--json"));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).not.toContain("part by part stops");
    const run = lines(out.stdout)
      .map((line) => JSON.parse(line) as { type: string; then?: Array<{ part_by_part: unknown[] }> })
      .find((object) => object.type === "run")!;
    expect(run.then![0]!.part_by_part.length).toBeGreaterThan(0);
    const uploaded = tasksOf(e, "number_activity_batch").flatMap((task) => e.sandbox.uploadedLines(task.id)!);
    expect(uploaded.length, "a number bought twice").toBe(new Set(uploaded).size);
    expect(uploaded).toHaveLength(40);
    expect(csvObjects(e, "out.csv").filter((row) => row.activity_status === "checked")).toHaveLength(40);
  }, 90_000);
});

describe("a chain killed while buying part by part", () => {
  it("carries on the later product's run of the first parts with its keys, and pays for each number once per product", async () => {
    const e = await threeParts(2, 10);
    const { path } = mixedList(e, "crm.csv", 40, 20);
    const argv = chainArgs(path, ...WAITING, "--join", "-o", "out.csv");
    const first = e.spawn(argv);
    await until(() => tasksOf(e, "number_activity_batch")[0]?.status === "processing", 30_000);
    first.child.kill("SIGKILL");
    await first.done.catch(() => undefined);
    expect(first.child.signalCode).toBe("SIGKILL");
    expect(
      tasksOf(e, "carrier_batch").some((task) => task.status === "processing"),
      "killed before the carrier tasks all ended",
    ).toBe(true);

    const again = await e.bin(argv);
    expect(again.code, again.stderr).toBe(0);
    // The carrier run and the activity run of the first parts are both carried on (the kill may land before the activity task id was kept).
    expect(again.stderr.match(/Carrying on run .* \(\d task\(s\) submitted so far\)/g)).toHaveLength(2);
    expect(again.stderr).not.toContain("abandoned");
    const carriers = tasksOf(e, "carrier_batch");
    expect(carriers).toHaveLength(3);
    const mobiles = await allMobiles(e);
    for (const product of ["carrier_batch", "number_activity_batch"]) {
      const uploaded = tasksOf(e, product).flatMap((task) => e.sandbox.uploadedLines(task.id)!);
      expect(uploaded.length, `${product}: a number uploaded twice`).toBe(new Set(uploaded).size);
    }
    expect(new Set(tasksOf(e, "number_activity_batch").flatMap((task) => e.sandbox.uploadedLines(task.id)!))).toEqual(mobiles);
    const rows = csvObjects(e, "out.csv");
    expect(rows).toHaveLength(60);
    expect(rows.filter((row) => row.activity_status === "checked")).toHaveLength(mobiles.size);
  }, 90_000);
});

describe("a chain in Excel", () => {
  it.each([
    ["merged", [] as string[], ["identifier", ...CARRIER, "checked_at", ...ACTIVITY]],
    ["joined", ["--join"], ["name", "phone", "identifier", ...CARRIER, "bulkcheck_status", "bc_checked_at", ...ACTIVITY]],
  ])(
    "writes a %s workbook with every product's columns and a Summary sheet of each product's run and statuses",
    async (_kind, flags, header) => {
      const e = await smallTasks();
      const { path } = mixedList(e, "crm.csv", 40, 20);
      const out = await e.run(chainArgs(path, ...WAITING, ...flags, "-o", "out.xlsx"));
      expect(out.code, out.stderr).toBe(0);
      const [results, summary] = await readWorkbook(join(e.dir, "out.xlsx"));
      expect(results!.rows[0]).toEqual(header);
      expect(results!.rows).toHaveLength(61);
      const activated = header.indexOf("activity_activated");
      expect(results!.rows.slice(1).filter((row) => typeof row[activated] === "boolean")).toHaveLength(40);
      expect(summary!.name).toBe("Summary");
      const cells = summary!.rows.map((row) => row.filter((cell) => cell !== ""));
      const [carrier] = tasksOf(e, "carrier_batch");
      const [activity] = tasksOf(e, "number_activity_batch");
      expect(cells).toContainEqual(["Product", "carrier_batch"]);
      expect(cells).toContainEqual(["Product", "number_activity_batch"]);
      expect(cells).toContainEqual(["Tasks", carrier!.id]);
      expect(cells).toContainEqual(["Tasks", activity!.id]);
      expect(cells).toContainEqual(["activity_status", "Rows"]);
      expect(cells).toContainEqual(["checked", 40]);
      expect(cells).toContainEqual(["not_selected", 20]);
    },
  );
});

describe("a chain's changes and report", () => {
  it("writes every product's changes in one --changes file, counts them in the summary and --exit-on-change, and reports each product", async () => {
    const e = await smallTasks({ drift: 0.3, seed: 7 });
    const { path } = mixedList(e, "crm.csv", 40, 20);
    const first = await e.run(chainArgs(path, ...WAITING, "-o", "a.csv"));
    expect(first.code, first.stderr).toBe(0);
    const again = [...WAITING, "--max-age", "0", "-o", "b.csv", "--changes", "c.csv", "--changes-summary", "--exit-on-change"];
    const second = await e.run(chainArgs(path, ...again, "--report", "r.html", "--json"));
    expect(second.code, second.stderr).toBe(11);

    // What the two merged files say changed: each carrier column, and activated where both runs checked it.
    const before = new Map(csvObjects(e, "a.csv").map((row) => [row.identifier!, row]));
    const expected: string[] = [];
    for (const row of csvObjects(e, "b.csv")) {
      const was = before.get(row.identifier!)!;
      for (const column of CARRIER)
        if (was[column] !== row[column]) expected.push(`${row.identifier},${column},${was[column]},${row[column]}`);
      if (was.activity_status === "checked" && row.activity_status === "checked" && was.activity_activated !== row.activity_activated)
        expected.push(`${row.identifier},activity_activated,${was.activity_activated},${row.activity_activated}`);
    }
    const [header, ...changes] = lines(readFileSync(join(e.dir, "c.csv"), "utf8"));
    expect(header).toBe("identifier,column,previous,current,previous_checked_at,checked_at");
    const written = changes.map((row) => row.split(",").slice(0, 4).join(","));
    expect(written.sort()).toEqual(expected.sort());
    expect(written.some((row) => row.includes(",activity_activated,"))).toBe(true);
    expect(written.some((row) => !row.includes(",activity_"))).toBe(true);
    expect(second.stderr).toMatch(/Changes since the previous check: \d+ of \d+ numbers checked before \(.*activity_activated \d+/);
    const run = lines(second.stdout)
      .map((line) => JSON.parse(line) as { type: string; changes?: { changed: number } })
      .find((object) => object.type === "run");
    expect(run!.changes!.changed).toBeGreaterThan(0);

    // One report, a part per product, each with its own changes.
    const html = readFileSync(join(e.dir, "r.html"), "utf8");
    expect(html).toContain("<title>bulkcheck report: carrier_batch, then number_activity_batch · GB</title>");
    expect(html).toContain('<h2 class="product">1. carrier_batch</h2>');
    expect(html).toContain('<h2 class="product">2. number_activity_batch</h2>');
    expect(html).toContain('id="p1-changed"');
    expect(html).toContain('id="p2-changed"');
    const ids = [...html.matchAll(/ id="([^"]+)"/g)].map((match) => match[1]);
    expect(ids.length).toBe(new Set(ids).size);
  });
});

describe("a product's task that fails", () => {
  it("writes the earlier products' results when a later product's task fails (its numbers failed, exit 6), and the next run checks only it again", async () => {
    // A seed under which the sandbox's first task (carriers) succeeds, its second (activity) fails and its third succeeds.
    const fails = (seed: number, ordinal: number) => hashUnit(seed, "fail", String(ordinal)) < 0.5;
    const seed = Array.from({ length: 200 }, (_, i) => i + 1).find((s) => !fails(s, 1) && fails(s, 2) && !fails(s, 3))!;
    const e = await smallTasks({ failRate: 0.5, seed });
    const { path } = mixedList(e, "crm.csv", 40, 20);
    const out = await e.run(chainArgs(path, ...WAITING, "--join", "-o", "out.csv"));
    expect(out.code, out.stderr).toBe(6);
    expect(out.stderr).toContain(
      "number_activity_batch's task failed, so the chain stopped there: the output has the earlier products' results, and number_activity_batch's numbers say failed",
    );
    const [failedTask] = tasksOf(e, "number_activity_batch");
    expect(failedTask!.status).toBe("failed");
    const rows = csvObjects(e, "out.csv");
    expect(rows).toHaveLength(60);
    expect(rows.every((row) => row.bulkcheck_status === "checked" && row.number_type !== "")).toBe(true);
    expect(rows.filter((row) => row.number_type === "mobile").every((row) => row.activity_status === "failed")).toBe(true);
    expect(rows.filter((row) => row.number_type === "fixed_line").every((row) => row.activity_status === "not_selected")).toBe(true);

    const again = await e.run(chainArgs(path, ...WAITING, "--join", "-o", "again.csv"));
    expect(again.code, again.stderr).toBe(0);
    expect(tasksOf(e, "carrier_batch")).toHaveLength(1);
    expect(tasksOf(e, "number_activity_batch")).toHaveLength(2);
    expect(csvObjects(e, "again.csv").filter((row) => row.activity_status === "checked")).toHaveLength(40);
  });
});

describe("a first product's task that fails", () => {
  it("leaves its numbers out of the later product (earlier_failed), writes every other result (exit 6), and the next run checks only them", async () => {
    // A seed under which the sandbox's first task fails and the next four succeed: the list is two carrier tasks of 30.
    const fails = (seed: number, ordinal: number) => hashUnit(seed, "fail", String(ordinal)) < 0.5;
    const seed = Array.from({ length: 500 }, (_, i) => i + 1).find((s) => fails(s, 1) && [2, 3, 4, 5].every((o) => !fails(s, o)))!;
    const e = await smallTasks({ failRate: 0.5, seed });
    expect((await e.run(["config", "set", "max-task-size", "30"])).code).toBe(0);
    const { path } = mixedList(e, "crm.csv", 40, 20);
    const out = await e.run(chainArgs(path, ...WAITING, "--join", "-o", "out.csv"));
    expect(out.code, out.stderr).toBe(6);
    expect(out.stderr).toContain("failed (refunded in full): 30 numbers say failed, and no later product checked them (earlier_failed)");

    const carriers = tasksOf(e, "carrier_batch");
    expect(carriers.map((task) => task.status).sort()).toEqual(["failed", "success"]);
    const failedNumbers = new Set(e.sandbox.uploadedLines(carriers.find((task) => task.status === "failed")!.id));
    const [activity] = tasksOf(e, "number_activity_batch");
    expect(tasksOf(e, "number_activity_batch")).toHaveLength(1);
    // Exactly the mobiles of the carrier task that answered; none of the failed task's numbers.
    const mobiles = await serviceResult(e, carriers.find((task) => task.status === "success")!.id);
    const selected = [...mobiles.values()].filter((row) => row.number_type === "mobile").map((row) => row.identifier!);
    expect([...e.sandbox.uploadedLines(activity!.id)!].sort()).toEqual(selected.sort());

    const rows = csvObjects(e, "out.csv");
    expect(rows).toHaveLength(60);
    for (const row of rows) {
      if (failedNumbers.has(row.identifier!)) {
        expect([row.bulkcheck_status, row.number_type, row.activity_status]).toEqual(["failed", "", "earlier_failed"]);
      } else {
        expect(row.bulkcheck_status).toBe("checked");
        expect(row.activity_status).toBe(row.number_type === "mobile" ? "checked" : "not_selected");
      }
    }
    const listed = JSON.parse((await e.run(["runs", "--json"])).stdout) as { runs: { product: string; state: string }[] };
    expect(listed.runs.filter((run) => run.product === "carrier_batch").map((run) => run.state)).toEqual(["failed"]);

    // The next run buys carriers for the failed task's numbers only, and activity for the mobiles among them.
    const again = await e.run(chainArgs(path, ...WAITING, "--join", "-o", "again.csv"));
    expect(again.code, again.stderr).toBe(0);
    const retried = tasksOf(e, "carrier_batch")[2]!;
    expect(new Set(e.sandbox.uploadedLines(retried.id))).toEqual(failedNumbers);
    const newMobiles = [...(await serviceResult(e, retried.id)).values()].filter((row) => row.number_type === "mobile");
    const [, laterActivity] = tasksOf(e, "number_activity_batch");
    expect([...e.sandbox.uploadedLines(laterActivity!.id)!].sort()).toEqual(newMobiles.map((row) => row.identifier!).sort());
    const final = csvObjects(e, "again.csv");
    expect(
      final
        .filter((row) => row.number_type === "mobile")
        .map((row) => row.activity_status)
        .sort(),
    ).toEqual([...newMobiles.map(() => "checked"), ...selected.map(() => "reused")].sort());
  });
});

describe("two chains of lists sharing numbers, started in the same instant", () => {
  it.each([
    [0, "one machine"],
    [1, "one machine"],
    [2, "two machines sharing PostgreSQL"],
  ] as const)("buy each shared number once per product (trial %i, %s)", async (trial, where) => {
    const e = await sandbox({ minTaskSize: 500, noResultRate: 0.04, fakeClock: false, numbersPerSecond: 5_000 });
    // L: 600 mobiles; M: the same 600 and 600 of its own.
    const offset = trial * 10_000;
    const l = e.file("l.txt", listText(600, offset));
    const m = e.file("m.txt", listText(1200, offset));
    const order = trial % 2 === 0 ? [l, m] : [m, l];
    const storeUrl = where === "one machine" ? undefined : await createTestDatabase();
    // A second machine: its own config and state directory, the same service and store.
    const env = () => (storeUrl ? { BULKCHECK_CONFIG_DIR: tempDir("bulkcheck-machine-"), BULKCHECK_STORE_URL: storeUrl } : {});
    const runs = order.map((list, index) => e.spawn(chainArgs(list, ...WAITING, "-o", `out-${index}.csv`), { env: env() }));
    const results = await Promise.all(runs.map((run) => run.done));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    for (const product of ["carrier_batch", "number_activity_batch"]) {
      const uploaded = tasksOf(e, product).flatMap((task) => e.sandbox.uploadedLines(task.id)!);
      expect(uploaded.length, `${product}: a number uploaded twice`).toBe(new Set(uploaded).size);
    }
    const carrierUploads = new Set(tasksOf(e, "carrier_batch").flatMap((task) => e.sandbox.uploadedLines(task.id)!));
    expect(carrierUploads).toEqual(new Set(gbList(1200, offset).map(identifier)));
    // Every mobile with a carrier result was checked for activity, by one of the two runs.
    const activityUploads = new Set(tasksOf(e, "number_activity_batch").flatMap((task) => e.sandbox.uploadedLines(task.id)!));
    const withCarrier = new Set<string>();
    for (const task of tasksOf(e, "carrier_batch")) for (const id of (await serviceResult(e, task.id)).keys()) withCarrier.add(id);
    expect(activityUploads).toEqual(withCarrier);
  });
});

describe("the same chain started twice at once", () => {
  it("buys each number once per product: the second command follows the first's runs, then writes its own output from the ledger", async () => {
    const e = await smallTasks({ numbersPerSecond: 20, fakeClock: false });
    const { path } = mixedList(e, "crm.csv", 40, 20);
    const runs = ["a.csv", "b.csv"].map((name) => e.spawn(chainArgs(path, ...WAITING, "--join", "-o", name)));
    const [a, b] = await Promise.all(runs.map((run) => run.done));
    expect(a!.code, a!.stderr).toBe(0);
    expect(b!.code, b!.stderr).toBe(0);
    expect(tasksOf(e, "carrier_batch")).toHaveLength(1);
    expect(tasksOf(e, "number_activity_batch")).toHaveLength(1);
    const [activity] = tasksOf(e, "number_activity_batch");
    expect([...e.sandbox.uploadedLines(activity!.id)!].sort()).toEqual((await mobilesByService(e)).sort());
    // One of the two waited for the other's run, and both outputs say the same.
    expect(`${a!.stderr}${b!.stderr}`).toMatch(/of this list is being carried on by .*: waiting for it to let go/);
    const values = (name: string) => csvObjects(e, name).map((row) => [row.identifier, row.number_type, row.activity_activated].join());
    expect(values("a.csv")).toEqual(values("b.csv"));
    expect(csvObjects(e, "a.csv").filter((row) => row.activity_activated !== "")).toHaveLength(40);
  }, 90_000);
});

describe("a chain killed between its products", () => {
  it.each([
    ["once the carrier task has finished, before the later product's task exists", "between"],
    ["while the later product's task is processing", "later processing"],
  ] as const)("killed %s, the same command carries on and pays for each number once per product", async (_name, when) => {
    const e = await smallTasks({ numbersPerSecond: 40, fakeClock: false });
    const { path } = mixedList(e, "crm.csv", 40, 20);
    const argv = chainArgs(path, ...WAITING, "--join", "-o", "out.csv");
    const first = e.spawn(argv);
    const stopped = () => first.child.exitCode !== null || first.child.signalCode !== null;
    if (when === "between") {
      await until(() => tasksOf(e, "carrier_batch")[0]?.status === "success", 20_000);
      first.child.kill("SIGSTOP");
      expect(tasksOf(e, "number_activity_batch"), "the kill landed after the later task was made").toHaveLength(0);
    } else {
      await until(() => tasksOf(e, "number_activity_batch")[0]?.status === "processing", 20_000);
    }
    expect(stopped()).toBe(false);
    first.child.kill("SIGKILL");
    await first.done.catch(() => undefined);
    expect(first.child.signalCode).toBe("SIGKILL");

    const again = await e.bin(argv);
    expect(again.code, again.stderr).toBe(0);
    expect(tasksOf(e, "carrier_batch")).toHaveLength(1);
    expect(tasksOf(e, "number_activity_batch")).toHaveLength(1);
    const [activity] = tasksOf(e, "number_activity_batch");
    expect([...e.sandbox.uploadedLines(activity!.id)!].sort()).toEqual((await mobilesByService(e)).sort());
    expect(again.stderr).toMatch(/Carrying on run .* \(1 task\(s\) submitted so far\)/);
    expect(again.stderr).not.toContain("abandoned");
    const rows = csvObjects(e, "out.csv");
    expect(rows).toHaveLength(60);
    expect(rows.filter((row) => row.activity_status === "checked")).toHaveLength(40);
    expect(new Set(rows.map((row) => identifier(row.phone!)))).toEqual(new Set(rows.map((row) => row.identifier)));
  });
});
