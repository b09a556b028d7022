import { describe, expect, it } from "vitest";
import { belowMinCheck, countryGroups, countryOfIdentifier } from "../../src/prepare/country-groups.js";
import { prepareText } from "./helpers.js";

describe("countryOfIdentifier", () => {
  // The main country of the calling code, which the service routes on: Jersey, Guernsey and
  // the Isle of Man go with GB, Canada and the Caribbean with the US, Kazakhstan with RU.
  it.each([
    ["447400123456", "GB"],
    ["441534123456", "GB"],
    ["447781123456", "GB"],
    ["447624123456", "GB"],
    ["14167360100", "US"],
    ["18762345678", "US"],
    ["12127360100", "US"],
    ["77012345678", "RU"],
    ["79123456789", "RU"],
    ["33612345678", "FR"],
    ["5906901234567", "GP"],
    ["80012345678", "001"],
  ])("puts %s in %s", (identifier, country) => {
    expect(countryOfIdentifier(identifier)).toBe(country);
  });
});

describe("countryGroups and belowMinCheck", () => {
  it("leaves out the countries with fewer numbers than the minimum, and numbers of no country, with a reason naming both", () => {
    const groups = countryGroups(
      new Map([
        ["GB", 10],
        ["FR", 3],
        ["001", 20],
      ]),
      { minTaskSize: 5, maxTaskSize: 8 },
    );
    expect(groups).toEqual({ minTaskSize: 5, maxTaskSize: 8, belowMin: { FR: 3, "001": 20 } });
    const reason = belowMinCheck(groups)!;
    expect(reason("447400123456")).toBeUndefined();
    expect(reason(33612345678)).toBe("FR has 3 numbers to check, fewer than the minimum task size of 5");
    expect(reason("80012345678")).toMatch(/no country/);
    expect(belowMinCheck({ ...groups, belowMin: {} })).toBeUndefined();
  });
});

describe("prepareList with anyRegion (--country auto)", () => {
  const list = ["+44 7400 100001", "+33 6 12 34 56 78", "07400 100002", "+1 416 736 0100", "+44 1534 123456"].join("\n") + "\n";

  it("keeps every country's numbers; national ones only with a default country", async () => {
    const withDefault = await prepareText("list.txt", list, { anyRegion: true, country: "GB" });
    expect(withDefault.kept).toEqual(["447400100001", "33612345678", "447400100002", "14167360100", "441534123456"]);
    expect(withDefault.summary.national_normalised).toBe(1);
    const without = await prepareText("list.txt", list, { anyRegion: true, country: undefined });
    expect(without.kept).toEqual(["447400100001", "33612345678", "14167360100", "441534123456"]);
    expect(without.summary.no_code_cnt).toBe(1);
  });

  it("groups the kept numbers into one upload per country in list order, split above the maximum, small countries left out", async () => {
    const many = Array.from({ length: 5 }, (_, i) => `+44 7400 10000${i}`).join("\n");
    const prepared = await prepareText("list.txt", `${many}\n${list}`, {
      anyRegion: true,
      country: "GB",
      countryTasks: { minTaskSize: 1, maxTaskSize: 4 },
    });
    // The Jersey number is in GB's group (+44), the Toronto one is the US's (+1).
    expect(prepared.chunks.map((chunk) => [chunk.country, chunk.count])).toEqual([
      ["GB", 3],
      ["GB", 3],
      ["FR", 1],
      ["US", 1],
    ]);
    const strict = await prepareText("list.txt", `${many}\n${list}`, {
      anyRegion: true,
      country: "GB",
      countryTasks: { minTaskSize: 2, maxTaskSize: 10 },
    });
    // The list repeats two of the five GB numbers: duplicates, as in any list.
    expect(strict.chunks.map((chunk) => [chunk.country, chunk.count])).toEqual([["GB", 6]]);
    expect(strict.summary).toMatchObject({ kept: 6, duplicate_cnt: 2, below_min_task: 2 });
    expect(strict.settings.countryGroups).toEqual({ minTaskSize: 2, maxTaskSize: 10, belowMin: { FR: 1, US: 1 } });
  });
});
