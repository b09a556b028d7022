import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LIBPHONENUMBER_VERSION, type PreparationSettings } from "../../src/prepare/settings.js";
import { joinResults } from "../../src/outputs/join-rows.js";
import { collector, makeTempDir } from "../results/helpers.js";

let dir: string;
let remove: () => Promise<void>;
beforeEach(async () => ({ dir, remove } = await makeTempDir()));
afterEach(() => remove());

const settings = (over: Partial<PreparationSettings>): PreparationSettings => ({
  version: 1,
  country: "GB",
  requireCountryCode: false,
  strictRegion: false,
  column: { index: 1 },
  delimiter: ",",
  hasHeader: true,
  encoding: "utf8",
  libphonenumber: { version: LIBPHONENUMBER_VERSION, metadata: "max" },
  ...over,
});

const results = { columns: ["carrier", "note"], byIdentifier: new Map([["447400123456", ["EE", 'says "hi", twice']]]) };

async function joined(source: string, over: Partial<PreparationSettings>): Promise<string> {
  const sourcePath = join(dir, "source.csv");
  await writeFile(sourcePath, source);
  const out = collector();
  await joinResults({ sourcePath, settings: settings(over), results, out: out.stream });
  out.stream.end();
  return out.text();
}

describe("joinResults quoting", () => {
  it("quotes only the fields that need it, after each record's own text, with the source's line ends", async () => {
    const text = await joined('name,phone\r\n"Smith, J",07400 123456\r\nAmy,not a number\r\n', {});
    expect(text).toBe(
      'name,phone,identifier,carrier,note,bulkcheck_status\r\n"Smith, J",07400 123456,447400123456,EE,"says ""hi"", twice",checked\r\nAmy,not a number,,,,invalid\r\n',
    );
  });

  it("quotes every added field, empty ones included, when the source's header quotes every field", async () => {
    const text = await joined('"name";"phone"\n"Amy";"07400 123456"\n"Bob";""\n', { delimiter: ";" });
    expect(text).toBe(
      '"name";"phone";"identifier";"carrier";"note";"bulkcheck_status"\n' +
        '"Amy";"07400 123456";"447400123456";"EE";"says ""hi"", twice";"checked"\n' +
        '"Bob";"";"";"";"";"blank"\n',
    );
  });

  it("quotes a plain list's line as a value and names its column", async () => {
    const text = await joined("07400 123456\n0740,0\n", { delimiter: undefined, hasHeader: false, column: { index: 0 } });
    expect(text).toBe(
      'phone,identifier,carrier,note,bulkcheck_status\n07400 123456,447400123456,EE,"says ""hi"", twice",checked\n"0740,0",,,,invalid\n',
    );
  });
});
