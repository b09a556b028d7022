import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { allowSmallTasks, tamperingProxy } from "../helpers/results-fixtures.js";
import { filesHolding } from "../helpers/store.js";
import { e2eSandboxes, gbList, identifier, lines, listText, submitAs, until, WAITING, type E2e } from "../helpers/sandbox.js";

/**
 * Issue 28, points 4 to 8: no output shows the database password; forget and prune reach
 * every copy of a number on the machine (staged results of a killed run, the local store
 * beside a team's), only the product asked for, with a dry run and a confirmation on a
 * shared store; what the ledger gives back is what the output got.
 */
const sandbox = e2eSandboxes();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const ACTIVITY = "number_activity_batch";

/**
 * Every file under `dir`, with its bytes. A running submit renames its temporary files while
 * this looks, so a file that is gone by the time it is read is left out.
 */
function filesUnder(dir: string): Array<{ name: string; bytes: Buffer }> {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).flatMap((name) => {
    try {
      const path = join(dir, name);
      return statSync(path).isFile() ? [{ name, bytes: readFileSync(path) }] : [];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
  });
}

/** The environment of a machine using a team's store: its own config and state directory. */
function teamMachine(storeUrl: string): Record<string, string> {
  return { BULKCHECK_CONFIG_DIR: tempDir("bulkcheck-machine-"), BULKCHECK_STORE_URL: storeUrl };
}

describe("forget and prune reach the results a killed run staged", () => {
  /**
   * A run of two parts of 25 numbers, one unfinished task at a time (each takes 2 s), killed
   * once the first part's result is staged, while the second is processing.
   */
  async function killedAfterFirstPart(e: E2e, env: Record<string, string> = {}) {
    await allowSmallTasks(e, 25);
    const list = e.file("list.txt", listText(50));
    const argv = [...submitAs(list, ACTIVITY, "GB", ...WAITING), "-o", "out.csv"];
    const run = e.spawn(argv, { env });
    const staging = join(e.configDir, "staging");
    await until(() => filesUnder(staging).some((file) => file.name.endsWith("part-1.result")), 30_000);
    run.child.kill("SIGKILL");
    await run.done;
    expect(existsSync(join(e.dir, "out.csv"))).toBe(false);
    return { argv, staging };
  }

  it.each([
    ["the local store", () => Promise.resolve({})],
    ["a team's store", async () => ({ BULKCHECK_STORE_URL: await createTestDatabase() })],
  ])(
    "forgets a number of a staged part on %s: its digits leave the staged file, and carrying the run on never records it again",
    async (_, storeEnv) => {
      const e = await sandbox({ fakeClock: false, minTaskSize: 1, maxUnfinished: 1, numbersPerSecond: 12.5 });
      const env: Record<string, string> = await storeEnv();
      const { argv, staging } = await killedAfterFirstPart(e, env);
      const [forgotten, kept] = gbList(2).map(identifier);
      expect(filesHolding(staging, forgotten!)).not.toEqual([]);

      // --yes: a team's store asks first, and there is no terminal here.
      const dry = await e.bin(["ledger", "forget", forgotten!, "--dry-run", "--yes"], { env });
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stderr).toContain("Would erase 1 row(s) of them from 1 result file(s) that unfinished runs staged");
      expect(dry.stderr).toContain("Nothing was erased (--dry-run).");
      expect(filesHolding(staging, forgotten!)).not.toEqual([]);

      const forgot = await e.bin(["ledger", "forget", forgotten!, "--json", "--yes"], { env });
      expect(forgot.code, forgot.stderr).toBe(0);
      expect(JSON.parse(forgot.stdout)).toMatchObject({ dry_run: false, staged_files: 1, staged_rows: 1 });
      expect(filesHolding(staging, forgotten!)).toEqual([]);
      expect(filesHolding(staging, kept!)).not.toEqual([]);

      // Carried on, the staged part is recorded by the recording worker's own connection to the store.
      const again = await e.bin(argv, { env });
      expect(again.code, again.stderr).toBe(0);
      expect(e.state().tasks).toHaveLength(2);
      const output = readFileSync(join(e.dir, "out.csv"), "utf8");
      expect(output).not.toContain(forgotten);
      expect(output).toContain(kept);
      const lookup = await e.bin(["ledger", "lookup", forgotten!], { env });
      expect(lookup.stderr).toContain(`No stored result for ${forgotten}.`);
      expect(filesHolding(e.configDir, forgotten!)).toEqual([]);
      expect((await e.bin(["ledger", "lookup", kept!, "--json"], { env })).stdout).toContain(kept);
    },
  );

  it("prunes a staged part whose task was checked before the cut (nothing with --dry-run)", async () => {
    const e = await sandbox({ fakeClock: false, minTaskSize: 1, maxUnfinished: 1, numbersPerSecond: 12.5 });
    const { staging } = await killedAfterFirstPart(e);
    // The first part's result, and on a busy machine perhaps the second's.
    const staged = () => filesUnder(staging).filter((file) => file.name.endsWith(".result")).length;
    const files = staged();
    const dry = await e.bin(["ledger", "prune", "--older-than", "0", "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, staged_files: files });
    expect(staged()).toBe(files);
    const pruned = await e.bin(["ledger", "prune", "--older-than", "0"]);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stderr).toContain(`Erased ${files} result file(s) that unfinished runs staged`);
    expect(staged()).toBe(0);
  });
});

describe("forget --product", () => {
  it("erases only that product's results of the number", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    expect((await e.run([...submitAs(list, ACTIVITY, "GB", ...WAITING), "-o", "a.csv"])).code).toBe(0);
    expect((await e.run([...submitAs(list, "number_validation_batch", "GB", ...WAITING), "-o", "v.csv"])).code).toBe(0);
    const [number] = gbList(1);
    const forgot = await e.run(["ledger", "forget", number!, "--product", "number_validation_batch"]);
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.stderr).toContain("Erased 1 result(s) of 1 number(s)");
    const left = lines((await e.run(["ledger", "lookup", number!, "--json"])).stdout).map(
      (line) => JSON.parse(line) as { product: string },
    );
    expect(left.map((row) => row.product)).toEqual([ACTIVITY]);
  });

  it("names --product, the flag given, when the product is unknown (issue 35, point 9)", async () => {
    const e = await sandbox();
    for (const verb of ["forget", "lookup"]) {
      const out = await e.run(["ledger", verb, gbList(1)[0]!, "--product", "bogus"]);
      expect(out.code).toBe(2);
      expect(out.stderr).toContain('error: Unknown --product "bogus".');
      expect(out.stderr).not.toContain("--type");
    }
  });
});

describe("forget and prune on a team's store", () => {
  it("asks on a terminal, refuses without one unless --yes, and says what --dry-run would erase", async () => {
    const e = await sandbox();
    const env = teamMachine(await createTestDatabase());
    const list = e.file("list.txt", listText(500));
    expect((await e.run([...submitAs(list, ACTIVITY, "GB", ...WAITING), "-o", "a.csv"], { env })).code).toBe(0);
    const [number] = gbList(1);
    const stored = async () => lines((await e.run(["ledger", "lookup", number!, "--json"], { env })).stdout).length;

    const unasked = await e.run(["ledger", "forget", number!], { env });
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain("add --yes to erase without a prompt");
    const dry = await e.run(["ledger", "forget", number!, "--dry-run"], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(/Would erase 1 result\(s\) of 1 number\(s\) from postgres:\/\/.*\nNothing was erased/);
    const declined = await e.run(["ledger", "forget", number!], { env, tty: true, stdin: "n\n" });
    expect(declined.code).toBe(130);
    expect(declined.stderr).toContain("Erase 1 result(s) of 1 number(s) from the shared store postgres://");
    expect(await stored()).toBe(1);
    const confirmed = await e.run(["ledger", "forget", number!], { env, tty: true, stdin: "y\n" });
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(await stored()).toBe(0);

    // Results checked before now (the sandbox's clock, which only the run's waits move).
    e.clock.ms += 1000;
    expect((await e.run(["ledger", "prune", "--older-than", "0"], { env })).code).toBe(2);
    const pruned = await e.run(["ledger", "prune", "--older-than", "0", "--yes", "--json"], { env });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ results_removed: 499 });
  });

  it("store import leaves no second copy of the numbers in the local file, and forget reaches a local store not imported", async () => {
    const e = await sandbox();
    const storeUrl = await createTestDatabase();
    const local = { BULKCHECK_CONFIG_DIR: tempDir("bulkcheck-local-") };
    const list = e.file("list.txt", listText(500));
    expect((await e.run([...submitAs(list, ACTIVITY, "GB", ...WAITING), "-o", "a.csv"], { env: local })).code).toBe(0);
    const digits = identifier(gbList(1)[0]!);
    expect(filesHolding(local.BULKCHECK_CONFIG_DIR, digits)).not.toEqual([]);

    const imported = await e.run(["store", "import"], { env: { ...local, BULKCHECK_STORE_URL: storeUrl } });
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toContain("Erased the 500 result(s) now held there from");
    expect(filesHolding(local.BULKCHECK_CONFIG_DIR, digits)).toEqual([]);
    expect((await e.run(["ledger", "lookup", digits, "--json"], { env: { BULKCHECK_STORE_URL: storeUrl } })).stdout).toContain(digits);

    // Checked here again with the local store, then the machine joins the team without importing.
    expect((await e.run([...submitAs(list, ACTIVITY, "GB", ...WAITING), "-o", "b.csv", "--max-age", "0"], { env: local })).code).toBe(0);
    const forgot = await e.run(["ledger", "forget", digits, "--yes"], { env: { ...local, BULKCHECK_STORE_URL: storeUrl } });
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.stderr).toContain("Erased 1 result(s) from");
    expect(forgot.stderr).toContain("this machine's own store (not in use)");
    expect(filesHolding(local.BULKCHECK_CONFIG_DIR, digits)).toEqual([]);
  });
});

describe("a NUL byte in a service value", () => {
  const stores: Array<[string, () => Promise<Record<string, string>>]> = [
    ["the local store", () => Promise.resolve({})],
    ["a team's store", async () => ({ BULKCHECK_STORE_URL: await createTestDatabase() })],
  ];

  it.each(stores)("comes back from %s as the output got it the first time", async (_, storeEnv) => {
    const e = await sandbox({ fakeClock: false });
    const proxy = await tamperingProxy(e.sandbox.url, { result: (csv) => csv.replace(/^(\d+),[^,\n]*/m, "$1,nul\0byte") });
    closers.push(proxy.close);
    const env = { ...(await storeEnv()), BULKCHECK_BASE_URL: proxy.url };
    const list = e.file("list.txt", listText(500));
    const first = await e.bin([...submitAs(list, "carrier_batch", "GB", ...WAITING), "-o", "first.csv"], { env });
    expect(first.code, first.stderr).toBe(0);
    const again = await e.bin([...submitAs(list, "carrier_batch", "GB", ...WAITING), "-o", "again.csv"], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("nothing to upload");
    const firstRows = readFileSync(join(e.dir, "first.csv"), "utf8");
    expect(firstRows).toContain("nul\0byte");
    // Reused rows come in another order than the list's: the same rows, byte for byte.
    const rows = (text: string) => lines(text).sort();
    expect(rows(readFileSync(join(e.dir, "again.csv"), "utf8"))).toEqual(rows(firstRows));
  });
});

describe("the database password", () => {
  const PASSWORD = "S3cr3tPw_rt!x";

  it("is refused by config set, in the URL's user part or a password= parameter, and shown by nothing", async () => {
    const e = await sandbox();
    for (const url of [`postgres://u@127.0.0.1:1/db?password=${PASSWORD}`, `postgres://u:${PASSWORD}@127.0.0.1:1/db`]) {
      const set = await e.run(["config", "set", "store", url]);
      expect(set.code).toBe(2);
      expect(set.stderr).toContain("PGPASSWORD");
      expect(set.stderr).not.toContain(PASSWORD);
    }
    expect(existsSync(join(e.configDir, "config.json")) ? readFileSync(join(e.configDir, "config.json"), "utf8") : "").not.toContain(
      PASSWORD,
    );
  });

  it("in a config file written before, or in BULKCHECK_STORE_URL, appears in no output of any command, --json or not", async () => {
    const e = await sandbox();
    expect((await e.run(["config", "set", "store", "postgres://u@127.0.0.1:1/db?sslmode=disable"])).code).toBe(0);
    const file = join(e.configDir, "config.json");
    writeFileSync(file, readFileSync(file, "utf8").replace("postgres://u@", `postgres://u:${PASSWORD}@`));
    const outputs = [
      await e.run(["config", "get", "store"]),
      await e.run(["config", "get", "store", "--json"]),
      await e.run(["config", "list"]),
      await e.run(["config", "list", "--json"]),
      await e.run(["store", "status"]),
      await e.run(["store", "status", "--json"]),
      await e.run(["ledger", "stats", "--json"]),
      await e.run(["config", "list", "--json"], { env: { BULKCHECK_STORE_URL: `postgres://u:${PASSWORD}@127.0.0.1:1/db` } }),
      await e.run(["store", "status"], { env: { BULKCHECK_STORE_URL: `postgres://u:${PASSWORD}@127.0.0.1:1/db` } }),
      await e.run(["store", "status"], { env: { BULKCHECK_STORE_URL: `postgres://u@127.0.0.1:1/db?password=${PASSWORD}` } }),
    ];
    expect(outputs.map((output) => output.code)).toEqual([0, 0, 0, 0, 7, 7, 7, 0, 7, 2]);
    expect(outputs[1]!.stdout).toBe('{"key":"store","value":"postgres://u@127.0.0.1:1/db?sslmode=disable"}\n');
    expect(outputs[7]!.stdout).toContain('"store":{"value":"postgres://u@127.0.0.1:1/db","source":"environment"');
    for (const output of outputs) expect(output.stdout + output.stderr).not.toContain(PASSWORD);
  });
});
