import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "csv-parse/sync";
import { BIN, runBin, runCli, tempDir } from "../helpers/cli.js";
import { writeWorkbook } from "../helpers/xlsx.js";

const CSV = [
  "name,phone,notes",
  "Ann,07400 100001,a",
  'Bob,+44 7400 100002,"x, y"',
  "Cat,07400 100001,dup",
  "Dan,n/a,",
  "Eve,+1 212 555 0142,us",
  "Fay,,blank",
  "Gus,07781 123456,Guernsey",
].join("\n");

function listFile(text = CSV, name = "list.csv"): { dir: string; path: string } {
  const dir = tempDir();
  const path = join(dir, name);
  writeFileSync(path, text);
  return { dir, path };
}

/** No key, no base URL, no network: validate must not need any. */
const LOCAL_ONLY = { env: { BULKCHECK_CONFIG_DIR: join(tempDir(), "config") } };

describe("bulkcheck validate", () => {
  it("prints the summary as one JSON object on stdout with --json, every row accounted for", async () => {
    const { path } = listFile();
    const out = await runCli(["validate", path, "--country", "GB", "--json"], LOCAL_ONLY);
    expect(out.code).toBe(0);
    const summary = JSON.parse(out.stdout);
    expect(summary).toMatchObject({
      rows_read: 7,
      submitted_lines: 6,
      kept: 3,
      invalid_cnt: 1,
      other_country_cnt: 1,
      duplicate_cnt: 1,
      blank: 1,
      national_normalised: 2,
      shared_code_regions: { GG: 1 },
      column: { index: 1, name: "phone", chosen_by: "header" },
    });
    expect(
      summary.kept + summary.invalid_cnt + summary.no_code_cnt + summary.other_country_cnt + summary.duplicate_cnt + summary.blank,
    ).toBe(summary.rows_read);
    expect(out.stderr).toContain('Reading phone numbers from column 2 "phone"');
  });

  it("writes the normalised list in first-seen order to -o and every excluded row to --rejects", async () => {
    const { dir, path } = listFile();
    const out = await runCli(
      ["validate", path, "--country", "GB", "-o", join(dir, "upload.txt"), "--rejects", join(dir, "rejects.csv")],
      LOCAL_ONLY,
    );
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("");
    expect(readFileSync(join(dir, "upload.txt"), "utf8")).toBe("447400100001\n447400100002\n447781123456\n");
    expect(readFileSync(join(dir, "rejects.csv"), "utf8")).toBe(
      [
        "line,value,class,reason,record,source:name",
        "4,07400 100001,duplicate,duplicate of line 2,3,Cat",
        "5,n/a,invalid,contains characters that are not part of a phone number,4,Dan",
        '6,+1 212 555 0142,other_country,"number belongs to +1 (US), not GB",5,Eve',
        "7,,blank,empty cell,6,Fay",
        "",
      ].join("\n"),
    );
    expect(out.stderr).toMatch(/kept \(to check\)\s+3/);
    expect(out.stderr).toContain("Upload list (3 numbers) written to");
  });

  it("writes the list to stdout with -o -, and refuses -o - together with --json (exit 2)", async () => {
    const { path } = listFile();
    const out = await runCli(["validate", path, "--country", "GB", "-o", "-"], LOCAL_ONLY);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("447400100001\n447400100002\n447781123456\n");
    const both = await runCli(["validate", path, "--country", "GB", "-o", "-", "--json"], LOCAL_ONLY);
    expect(both.code).toBe(2);
    expect(both.stdout).toBe("");
  });

  it("applies --require-country-code and --strict-region as the service would", async () => {
    const { path } = listFile();
    const out = await runCli(["validate", path, "--country", "GB", "--require-country-code", "--strict-region", "-o", "-"], LOCAL_ONLY);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("447400100002\n");
  });

  it("refuses to overwrite -o without --force (exit 2) and replaces it with --force", async () => {
    const { dir, path } = listFile();
    const upload = join(dir, "upload.txt");
    writeFileSync(upload, "old\n");
    const refused = await runCli(["validate", path, "--country", "GB", "-o", upload], LOCAL_ONLY);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--force");
    expect(readFileSync(upload, "utf8")).toBe("old\n");
    const forced = await runCli(["validate", path, "--country", "GB", "-o", upload, "--force"], LOCAL_ONLY);
    expect(forced.code).toBe(0);
    expect(readFileSync(upload, "utf8")).toBe("447400100001\n447400100002\n447781123456\n");
  });

  it("leaves no -o file behind when the list cannot be read", async () => {
    const { dir, path } = listFile('name,phone\n"unclosed,07400 100001\n');
    const out = await runCli(["validate", path, "--country", "GB", "-o", join(dir, "upload.txt")], LOCAL_ONLY);
    expect(out.code).toBe(3);
    expect(existsSync(join(dir, "upload.txt"))).toBe(false);
  });

  it("gives byte-identical output on worker threads (--threads 2) and in-thread (the built binary)", async () => {
    const rows = ["id,phone"];
    for (let i = 0; i < 120_000; i++) {
      const n = String(i % 100_000).padStart(6, "0");
      rows.push(i % 7 === 0 ? `${i},+1 212 555 ${n.slice(2)}` : i % 11 === 0 ? `${i},bad ${n}` : `${i},07400 ${n}`);
    }
    const { dir, path } = listFile(rows.join("\n"));
    const run = async (threads: string) => {
      const out = await runBin(
        [
          "validate",
          path,
          "--country",
          "GB",
          "--threads",
          threads,
          "--json",
          "-o",
          join(dir, `up-${threads}.txt`),
          "--rejects",
          join(dir, `rj-${threads}.csv`),
        ],
        LOCAL_ONLY,
      );
      expect(out.code, out.stderr).toBe(0);
      return {
        summary: JSON.parse(out.stdout),
        upload: readFileSync(join(dir, `up-${threads}.txt`)),
        rejects: readFileSync(join(dir, `rj-${threads}.csv`)),
      };
    };
    const inThread = await run("0");
    const threaded = await run("2");
    expect(inThread.summary.duplicate_cnt).toBeGreaterThan(0);
    expect(threaded.summary).toEqual(inThread.summary);
    expect(threaded.upload.equals(inThread.upload)).toBe(true);
    expect(threaded.rejects.equals(inThread.rejects)).toBe(true);
  });

  it("runs in a process limited to 2 GB of address space (ulimit -v)", () => {
    const lines = Array.from({ length: 300_000 }, (_, i) => `07400 ${String(i).padStart(6, "0")}`);
    const { path } = listFile(`${lines.join("\n")}\n`, "list.txt");
    const script = 'ulimit -v 2000000 && exec "$0" "$@"';
    const result = spawnSync(
      "sh",
      ["-c", script, process.execPath, BIN, "validate", path, "--country", "GB", "--json", "-o", join(dirname(path), "upload.txt")],
      {
        encoding: "utf8",
        env: { ...process.env, ...LOCAL_ONLY.env },
      },
    );
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ kept: 300_000 });
  });
});

describe("a --type or --country that is nearly right", () => {
  it.each([
    [["--type", "Carrier_Batch"], 'Unknown --type "Carrier_Batch". Did you mean carrier_batch?'],
    [["--type", "carier_batch"], 'Unknown --type "carier_batch". Did you mean carrier_batch?'],
    [["--type", "Global_Carrier_Batch"], 'Unknown --type "Global_Carrier_Batch". Did you mean carrier_batch?'],
    [["--country", "UK"], "--country UK is not an ISO 3166-1 alpha-2 country code. Did you mean GB?"],
    [["--country", "Germany"], "--country Germany is not an ISO 3166-1 alpha-2 country code. Did you mean DE?"],
    [
      ["--country", "auto", "--default-country", "+44"],
      "--default-country +44 is not an ISO 3166-1 alpha-2 country code. Did you mean GB?",
    ],
  ])("%j exits 2 with the value it probably meant", async (flags, message) => {
    const { path } = listFile();
    const out = await runBin(["validate", path, ...(flags.includes("--country") ? [] : ["--country", "GB"]), ...flags], LOCAL_ONLY);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`error: ${message}`);
    expect(out.stdout).toBe("");
  });

  it("suggests a setting for config set with a misspelt name", async () => {
    const out = await runBin(["config", "set", "min-task-sise", "1000"], LOCAL_ONLY);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('Unknown setting "min-task-sise". Did you mean min-task-size?');
  });
});

describe("the rejects file names each record", () => {
  /** 1,201 rows whose notes span two lines every third row, so physical lines run far past the records. */
  function crm(): { text: string; bad: Array<{ record: number; id: string }> } {
    const rows = ["customer_id,name,phone,notes"];
    const bad: Array<{ record: number; id: string }> = [];
    for (let record = 1; record <= 1201; record++) {
      const id = `C-${10_000 + record}`;
      const phone = record % 100 === 0 ? "n/a" : `+44 7400 ${100_000 + record}`;
      if (phone === "n/a") bad.push({ record, id });
      rows.push(`${id},Person ${record},${phone},${record % 3 === 0 ? '"called twice,\nno answer"' : "ok"}`);
    }
    return { text: rows.join("\n") + "\n", bad };
  }

  it("by its record number and the source's id column, after the line, value, class and reason it always had", async () => {
    const { text, bad } = crm();
    const { dir, path } = listFile(text, "crm.csv");
    for (const threads of ["0", "2"]) {
      const rejects = join(dir, `rejects-${threads}.csv`);
      const out = await runBin(["validate", path, "--country", "GB", "--rejects", rejects, "--threads", threads], LOCAL_ONLY);
      expect(out.code, out.stderr).toBe(0);
      const rows: string[][] = parse(readFileSync(rejects, "utf8"));
      expect(rows[0]).toEqual(["line", "value", "class", "reason", "record", "source:customer_id"]);
      expect(rows.slice(1).map((row) => [row[1], row[2], row[4], row[5]])).toEqual(
        bad.map(({ record, id }) => ["n/a", "invalid", String(record), id]),
      );
      // The physical line of the last bad record is far past the 1,201 records, as an editor counts lines.
      expect(Number(rows.at(-1)![0])).toBeGreaterThan(1500);
    }
  });

  it("for a workbook too, by the sheet's id column", async () => {
    const dir = tempDir();
    const path = await writeWorkbook(join(dir, "crm.xlsx"), [
      {
        name: "Contacts",
        rows: [["name", "phone", "Account ID"], ["Ann", "+44 7400 100001", "A-1"], ["Bob", "n/a", "A-2"], undefined, ["Cy", "0", "A-4"]],
      },
    ]);
    const out = await runBin(["validate", path, "--country", "GB", "--rejects", "-"], LOCAL_ONLY);
    expect(out.code, out.stderr).toBe(0);
    expect(parse(out.stdout)).toEqual([
      ["line", "value", "class", "reason", "record", "source:Account ID"],
      ["3", "n/a", "invalid", "contains characters that are not part of a phone number", "2", "A-2"],
      ["4", "", "blank", "empty cell", "3", ""],
      ["5", "0", "invalid", expect.any(String), "4", "A-4"],
    ]);
  });
});
