import { chmodSync, createReadStream, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readResults } from "../../src/results/read-results.js";
import { removeResultRows } from "../../src/results/remove-rows.js";
import type { ServiceType } from "../../src/spec/products.js";
import { tempDir } from "../helpers/cli.js";
import { zipOf } from "../helpers/results-fixtures.js";

/** A staged result file holding `body`, 0600 as staging writes it. */
function stagedFile(body: string | Buffer): string {
  const path = join(tempDir(), "part-1.result");
  writeFileSync(path, body);
  chmodSync(path, 0o600);
  return path;
}

/** The rows every reader of results gets from the file, header first. */
async function table(path: string, serviceType: ServiceType = "carrier_batch"): Promise<Array<readonly string[]>> {
  const rows: Array<readonly string[]> = [];
  for await (const row of readResults([{ open: () => Promise.resolve(createReadStream(path)) }], { serviceType })) rows.push(row);
  return rows;
}

const FORGOTTEN = new Set([447400100002]);

describe("removing numbers' rows from a staged result", () => {
  it("keeps every other record as it was (a quoted line break, a quote, a NUL, the header) and the file's mode", async () => {
    const kept = ['447400100001,"Voda\nfone ""UK""",EE,mobile,GB,London,', "447400100003,nul\0byte,,mobile,GB,,"];
    const path = stagedFile(
      `identifier,carrier,underlying_carrier,number_type,country_code,region,city\r\n${kept[0]}\r\n447400100002,O2,,mobile,GB,,\r\n${kept[1]}`,
    );
    const before = (await table(path)).filter((row) => row[0] !== "447400100002");
    expect(await removeResultRows(path, FORGOTTEN, { dryRun: true })).toBe(1);
    expect(readFileSync(path, "utf8")).toContain("447400100002");
    expect(await removeResultRows(path, FORGOTTEN)).toBe(1);
    const text = readFileSync(path, "utf8");
    expect(text).toBe(`identifier,carrier,underlying_carrier,number_type,country_code,region,city\n${kept[0]}\n${kept[1]}\n`);
    expect(await table(path)).toEqual(before);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(path, ".."))).toEqual(["part-1.result"]);
  });

  it("finds the identifier by its header name in any column, and in the first column of a file without a header", async () => {
    const moved = stagedFile("activated,identifier\ntrue,447400100001\nfalse,447400100002\n");
    expect(await removeResultRows(moved, FORGOTTEN)).toBe(1);
    expect(readFileSync(moved, "utf8")).toBe("activated,identifier\ntrue,447400100001\n");
    const bare = stagedFile("447400100002,false\n447400100001,true\n");
    expect(await removeResultRows(bare, FORGOTTEN)).toBe(1);
    expect(readFileSync(bare, "utf8")).toBe("447400100001,true\n");
  });

  it("rewrites a zipped result as the CSV inside it, without the rows", async () => {
    const path = stagedFile(await zipOf({ "result.csv": "identifier,activated\n447400100001,true\n447400100002,false\n" }));
    expect(await removeResultRows(path, FORGOTTEN)).toBe(1);
    expect(readFileSync(path, "utf8")).toBe("identifier,activated\n447400100001,true\n");
    expect(await table(path, "number_activity_batch")).toEqual([
      ["identifier", "activated"],
      ["447400100001", "true"],
    ]);
  });

  it("leaves a file without those numbers as it is", async () => {
    const body = "identifier,activated\r\n447400100001,true";
    const path = stagedFile(body);
    const { mtimeMs } = statSync(path);
    expect(await removeResultRows(path, FORGOTTEN)).toBe(0);
    expect(readFileSync(path, "utf8")).toBe(body);
    expect(statSync(path).mtimeMs).toBe(mtimeMs);
  });
});
