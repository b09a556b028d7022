import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeResults } from "../../src/results/write-results.js";
import { entryKind } from "../../src/results/unzip.js";
import { collector, makeTempDir, sourceOf, zipOf } from "./helpers.js";

const CSV = "identifier,activated\n4915112345678,true\n4915112345679,false\n";

let dir: string;
let remove: () => Promise<void>;
beforeEach(async () => ({ dir, remove } = await makeTempDir()));
afterEach(() => remove());

async function unzipToText(zip: Buffer, limits: { maxUncompressedBytes?: number } = {}): Promise<string> {
  const out = collector();
  await writeResults(
    [sourceOf(zip, 7)],
    { stream: out.stream, end: true },
    {
      serviceType: "number_validation_batch",
      tempDir: dir,
      ...limits,
    },
  );
  return out.text();
}

describe("entryKind", () => {
  it.each([
    ["result.csv", "csv"],
    ["out/RESULT.CSV", "csv"],
    ["out/", "directory"],
    ["__MACOSX/._result.csv", "junk"],
    ["out/._result.csv", "junk"],
    [".DS_Store", "junk"],
    ["readme.txt", "other"],
  ] as const)("classes %s as %s", (name, kind) => {
    expect(entryKind(name)).toBe(kind);
  });
});

describe("zipped results", () => {
  it("reads the CSV inside a zip with a header", async () => {
    expect(await unzipToText(await zipOf({ "result.csv": CSV }))).toBe(CSV);
  });

  it("reads a headerless CSV inside a zip and adds the spec's header", async () => {
    const zip = await zipOf({ "out/": "", "out/result.csv": "4915112345678,true\n", "__MACOSX/._result.csv": "junk" });
    expect(await unzipToText(zip)).toBe("identifier,activated\n4915112345678,true\n");
  });

  it("removes the spooled zip once it has been read", async () => {
    await unzipToText(await zipOf({ "result.csv": CSV }));
    expect(await readdir(dir)).toEqual([]);
  });

  it.each([
    ["two CSVs", { "a.csv": CSV, "b.csv": CSV }, "ZIP_MANY_CSV", /more than one CSV \(a\.csv, b\.csv\)/],
    ["no CSV", { "readme.txt": "hello" }, "ZIP_NO_CSV", /no CSV file \(found: readme\.txt\)/],
  ])("rejects a zip with %s clearly", async (_what, entries, code, message) => {
    const failure = unzipToText(await zipOf(entries));
    await expect(failure).rejects.toMatchObject({ code, message: expect.stringMatching(message) });
    expect(await readdir(dir)).toEqual([]);
  });

  it("rejects an entry named ../evil.csv without writing anything outside the output", async () => {
    const zip = await zipOf({ "xx/evil.csv": CSV });
    let patched = zip;
    for (let at = patched.indexOf("xx/evil.csv"); at >= 0; at = patched.indexOf("xx/evil.csv", at + 1)) {
      patched = Buffer.concat([patched.subarray(0, at), Buffer.from("../evil.csv"), patched.subarray(at + 11)]);
    }
    await expect(unzipToText(patched)).rejects.toMatchObject({ code: "ZIP_UNSAFE_NAME" });
    expect(await readdir(dir)).toEqual([]);
    expect(await readdir(join(dir, ".."))).not.toContain("evil.csv");
  });

  it("rejects a CSV that expands past the size cap", async () => {
    const zip = await zipOf({ "result.csv": CSV.repeat(1000) });
    await expect(unzipToText(zip, { maxUncompressedBytes: 10_000 })).rejects.toMatchObject({
      code: "ZIP_TOO_LARGE",
      message: expect.stringMatching(/would expand to 60000 bytes, over the 10000-byte limit/),
    });
  });

  it("rejects an entry whose compression ratio looks like a zip bomb", async () => {
    const bomb = await zipOf({ "result.csv": `identifier,activated\n${"4915112345678,true\n".repeat(200_000)}` });
    await expect(unzipToText(bomb)).rejects.toMatchObject({
      code: "ZIP_TOO_LARGE",
      message: expect.stringMatching(/zip bomb/),
    });
  });

  it("rejects a body that starts like a zip but is not one", async () => {
    await expect(unzipToText(Buffer.from("PK\u0003\u0004 not really a zip"))).rejects.toMatchObject({ code: "ZIP_INVALID" });
    expect(await readdir(dir)).toEqual([]);
  });
});
