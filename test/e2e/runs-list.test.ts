import { describe, expect, it } from "vitest";
import { count } from "../../src/format-count.js";
import { formatUsd } from "../../src/tasks/cost.js";
import {
  e2eSandboxes,
  lines,
  listedRuns,
  listText,
  submitAs,
  WAITING,
  type E2e,
  type ListedRun,
  type ListedRuns,
} from "../helpers/sandbox.js";

/**
 * `bulkcheck runs`: where each run went (service and profile), only this service and
 * profile's by default like `status`, `--all` for every one, `--state` and `--since`
 * filters, and totals of what is listed.
 */
const sandbox = e2eSandboxes();
const ACTIVITY = "number_activity_batch";
const DAY_MS = 86_400_000;

/** The scope's base URL as runs carry it: without a trailing slash. */
function service(e: E2e): string {
  return e.sandbox.url.replace(/\/+$/, "");
}

/** A finished run, in-process against `e`, of a list `name` of `numbers` numbers (gbList's from `offset`) as `product`. */
async function finishedRun(e: E2e, product: string, name: string, numbers: number, offset: number, ...extra: string[]): Promise<void> {
  const list = e.file(name, listText(numbers, offset));
  const run = await e.run([...submitAs(list, product, "GB", ...WAITING), ...extra]);
  expect(run.code, run.stderr).toBe(0);
}

const FIGURES = ["kept", "reused", "uploaded", "padded", "checked", "charged_micros", "saved_micros"] as const;

/** Each figure of `runs` summed. */
function sums(runs: readonly ListedRun[]): Record<(typeof FIGURES)[number], number> {
  return Object.fromEntries(FIGURES.map((figure) => [figure, runs.reduce((sum, run) => sum + run[figure], 0)])) as Record<
    (typeof FIGURES)[number],
    number
  >;
}

describe("runs say where they went", () => {
  it("lists only this service and profile's runs by default, and with --all every one, each with its service and profile", async () => {
    const e = await sandbox();
    const other = await sandbox();
    await finishedRun(e, ACTIVITY, "mine.txt", 500, 0, "-o", "mine.csv");
    await finishedRun(e, ACTIVITY, "night.txt", 500, 1000, "-o", "night.csv", "--profile", "night");
    // The same state directory (one store), another service.
    const elsewhere = await other.run([...submitAs(e.file("elsewhere.txt", listText(500, 2000)), ACTIVITY, "GB", ...WAITING)], {
      env: { BULKCHECK_CONFIG_DIR: e.configDir },
    });
    expect(elsewhere.code, elsewhere.stderr).toBe(0);

    const where = (listed: ListedRuns) => listed.runs.map((run) => [run.service, run.profile]);
    expect(where(await listedRuns(e))).toEqual([[service(e), "default"]]);
    expect(where(await listedRuns(e, ["--profile", "night"]))).toEqual([[service(e), "night"]]);
    expect(where(await listedRuns(other, [], { env: { BULKCHECK_CONFIG_DIR: e.configDir } }))).toEqual([[service(other), "default"]]);
    // The built binary, as a user runs it.
    const all = await e.bin(["runs", "--all", "--json"]);
    expect(all.code, all.stderr).toBe(0);
    const listed = JSON.parse(all.stdout) as ListedRuns;
    expect(where(listed).sort()).toEqual(
      [
        [service(e), "default"],
        [service(e), "night"],
        [service(other), "default"],
      ].sort(),
    );
    expect(listed.totals.groups.map((group) => [group.service, group.profile, group.product, group.runs]).sort()).toEqual(
      [
        [service(e), "default", ACTIVITY, 1],
        [service(e), "night", ACTIVITY, 1],
        [service(other), "default", ACTIVITY, 1],
      ].sort(),
    );

    const table = await e.bin(["runs", "--all"]);
    expect(table.code, table.stderr).toBe(0);
    const [header, ...rows] = lines(table.stdout).map((line) => line.split("\t"));
    expect(header!.slice(-2)).toEqual(["SERVICE", "PROFILE"]);
    expect(rows.map((row) => row.slice(-2)).sort()).toEqual(where(listed).sort());
    expect(table.stderr).toContain("Totals of 3 runs of every service and profile: 1,500 kept");
    expect(table.stderr).toContain(`  ${ACTIVITY} at ${service(other)} (profile default), 1 run: 500 kept`);

    const nowhere = await e.run(["runs"], { env: { BULKCHECK_BASE_URL: undefined } });
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('No service base URL is set for profile "default"');
    expect(nowhere.stderr).toContain("Or list the runs of every service and profile: bulkcheck runs --all");

    const mine = await e.run(["runs"]);
    expect(lines(mine.stdout)).toHaveLength(2);
    expect(mine.stderr).toContain(`Totals of 1 run of ${service(e)} (profile default): 500 kept`);
  });

  it("filters by --state and --since (an age or an ISO date), in the store", async () => {
    const e = await sandbox({ numbersPerSecond: 1, minTaskSize: 10 });
    expect((await e.run(["config", "set", "min-task-size", "10"])).code).toBe(0);
    const started = new Date(e.clock.ms).toISOString();
    await finishedRun(e, ACTIVITY, "old.txt", 10, 0, "-o", "old.csv");
    e.clock.ms += 3 * DAY_MS;
    // Timed out long before its task finishes (500 s): the run stays open.
    const open = await e.run([
      ...submitAs(e.file("open.txt", listText(500, 100)), ACTIVITY, "GB", "--yes", "--wait", "--interval", "1"),
      "--timeout",
      "30",
    ]);
    expect(open.code).toBe(8);
    await finishedRun(e, ACTIVITY, "new.txt", 10, 1000, "-o", "new.csv");
    const sources = async (...args: string[]) => (await listedRuns(e, args)).runs.map((run) => run.source.replace(/^.*\//, ""));

    expect(await sources()).toEqual(["new.txt", "open.txt", "old.txt"]);
    expect(await sources("--state", "open")).toEqual(["open.txt"]);
    expect(await sources("--state", "finished")).toEqual(["new.txt", "old.txt"]);
    expect(await sources("--state", "failed")).toEqual([]);
    expect(await sources("--since", "1d")).toEqual(["new.txt", "open.txt"]);
    expect(await sources("--since", "1d", "--state", "finished")).toEqual(["new.txt"]);
    expect(await sources("--since", new Date(e.clock.ms - DAY_MS).toISOString().slice(0, 10))).toEqual(["new.txt", "open.txt"]);
    expect(await sources("--since", started)).toEqual(["new.txt", "open.txt", "old.txt"]);
    expect(await sources("--since", "1d", "--limit", "1")).toEqual(["new.txt"]);

    const none = await e.run(["runs", "--state", "abandoned", "--since", "1d"]);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe("");
    expect(none.stderr).toMatch(
      /^No abandoned runs of \S+ \(profile default\) started since \S+\. Every service and profile's: bulkcheck runs --all\n$/,
    );
    expect((await e.run(["runs", "--state", "closed"])).code).toBe(2);
    expect((await e.run(["runs", "--since", "yesterday"])).code).toBe(2);
  });

  it("with --since and no --limit lists and totals every run of the period, not only the 20 newest", async () => {
    const e = await sandbox({ minTaskSize: 1 });
    expect((await e.run(["config", "set", "min-task-size", "1"])).code).toBe(0);
    for (let night = 0; night < 21; night++) {
      const out = await e.run(submitAs(e.file(`night-${night}.txt`, listText(1, night)), ACTIVITY, "GB", "--yes", "--quiet"));
      expect(out.code, out.stderr).toBe(0);
    }
    expect((await listedRuns(e)).runs).toHaveLength(20);
    const month = await listedRuns(e, ["--since", "30d"]);
    expect(month.totals).toMatchObject({ runs: 21, kept: 21, uploaded: 21 });
    expect((await listedRuns(e, ["--since", "30d", "--limit", "5"])).totals.runs).toBe(5);
  });

  it("totals what it lists, per product and in all: the same figures as the runs' sums, in JSON and for people", async () => {
    const e = await sandbox();
    await finishedRun(e, ACTIVITY, "night1.txt", 500, 0, "-o", "n1.csv");
    // 500 of these numbers have fresh results; the 10 new ones fill a task of the minimum size (500) with fresh ones.
    await finishedRun(e, ACTIVITY, "night2.txt", 510, 0, "-o", "n2.csv", "--max-age", "7d");
    await finishedRun(e, "carrier_batch", "carrier.txt", 500, 5000, "-o", "c.csv");

    const { runs, totals } = await listedRuns(e);
    expect(runs).toHaveLength(3);
    const reusing = runs.find((run) => run.source.endsWith("night2.txt"))!;
    expect(reusing.reused).toBeGreaterThan(0);
    expect(reusing.saved_micros).toBeGreaterThan(0);
    const shown = await e.run(["runs", "show", reusing.id]);
    expect(shown.stderr).toMatch(new RegExp(`^service +${service(e)}$`, "m"));
    expect(shown.stderr).toMatch(new RegExp(`^saved by reuse +\\${formatUsd(reusing.saved_micros)}$`, "m"));
    expect(totals).toMatchObject({ runs: 3, ...sums(runs) });
    const activity = runs.filter((run) => run.product === ACTIVITY);
    expect(totals.groups).toEqual([
      {
        service: service(e),
        profile: "default",
        product: "carrier_batch",
        runs: 1,
        ...sums(runs.filter((run) => run.product === "carrier_batch")),
      },
      { service: service(e), profile: "default", product: ACTIVITY, runs: 2, ...sums(activity) },
    ]);

    const listed = await e.run(["runs"]);
    const [header, ...rows] = lines(listed.stdout).map((line) => line.split("\t"));
    const column = (name: string) => rows.map((row) => Number(row[header!.indexOf(name)]));
    const total = (name: string) => column(name).reduce((sum, value) => sum + value, 0);
    expect([total("KEPT"), total("REUSED"), total("UPLOADED")]).toEqual([totals.kept, totals.reused, totals.uploaded]);
    expect(listed.stderr).toContain(
      `Totals of 3 runs of ${service(e)} (profile default): ${count(totals.kept)} kept, ${count(totals.reused)} reused, ` +
        `${count(totals.uploaded)} uploaded, ${count(totals.padded)} padded, ${count(totals.checked)} checked; ` +
        `charged ${formatUsd(totals.charged_micros)}, saved by reuse ${formatUsd(totals.saved_micros)}.`,
    );
    expect(listed.stderr).toContain(`  ${ACTIVITY}, 2 runs: ${count(sums(activity).kept)} kept`);
  });
});
