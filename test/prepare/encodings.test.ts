import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { buffer } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import { InputRejectedError } from "../../src/errors.js";
import { prepareList } from "../../src/prepare/index.js";
import { joinResults } from "../../src/outputs/join-rows.js";
import { listFile, prepare, tempDir } from "./helpers.js";
import { cp1252 } from "../helpers/windows-1252.js";

/** A CRM export as Excel on Windows saves it: names with accents, the phone column ASCII but for an en dash. */
const CRM = cp1252("id,name,phone,note\r\n1,Müller,07400 100001,Crème brûlée\r\n2,José,07400–100002,€ 5\r\n3,O’Neil,+44 7400 100003,\r\n");

describe("prepareList encodings", () => {
  it("reads a list that is not valid UTF-8 as Windows-1252 and says it detected so", async () => {
    const { kept, summary, format, settings } = await prepare(await listFile("crm.csv", CRM));
    // The en dash (0x96) is number punctuation only in Windows-1252: Latin-1 would read a control character.
    expect(kept).toEqual(["447400100001", "447400100002", "447400100003"]);
    expect(summary).toMatchObject({ encoding: "windows-1252", encoding_source: "detected" });
    expect(format.encoding).toBe("windows-1252");
    expect(settings.encoding).toBe("windows-1252");
  });

  it("checks the whole file, not its start: 2 MB of ASCII before the first Müller", async () => {
    const ascii = Buffer.from("name,phone\n" + "Amy,07400 100001\n".repeat(120_000));
    const { summary } = await prepare(await listFile("long.csv", Buffer.concat([ascii, cp1252("Müller,07400 100002\n")])));
    expect(summary).toMatchObject({ encoding: "windows-1252", kept: 2, duplicate_cnt: 119_999 });
  });

  it("reads valid UTF-8 as UTF-8", async () => {
    const { summary } = await prepare(await listFile("crm.csv", "name,phone\nMüller,07400 100001\n"));
    expect(summary).toMatchObject({ encoding: "utf8", encoding_source: "detected" });
  });

  it.each([
    ["latin1", CRM, { encoding: "latin1", kept: 2, invalid_cnt: 1 }],
    ["windows-1252", CRM, { encoding: "windows-1252", kept: 3 }],
    ["utf16le", Buffer.from("phone\n07400 100001\n", "utf16le"), { encoding: "utf16le", kept: 1 }],
    ["utf16be", Buffer.from("phone\n07400 100001\n", "utf16le").swap16(), { encoding: "utf16be", kept: 1 }],
    ["utf8", Buffer.from("\ufeffphone\n07400 100001\n"), { encoding: "utf8-bom", kept: 1 }],
  ] as const)("reads the list as --encoding %s says", async (encoding, bytes, expected) => {
    const { summary } = await prepare(await listFile("list.csv", bytes), { encoding });
    expect(summary).toMatchObject({ ...expected, encoding_source: "forced" });
  });

  it("refuses a Windows-1252 list forced to be read as UTF-8, naming the line", async () => {
    const run = prepareList({ source: await listFile("crm.csv", CRM), country: "GB", encoding: "utf8", outputDir: await tempDir() });
    await expect(run).rejects.toBeInstanceOf(InputRejectedError);
    await expect(run).rejects.toThrow(/is not UTF-8 text \(bad bytes on line 2\)/);
  });
});

describe("joinResults in the source's encoding", () => {
  it("writes a Windows-1252 source's rows back byte for byte, every byte 0x80–0xFF included, and the result columns in it too", async () => {
    const names = Buffer.from(Array.from({ length: 128 }, (_, i) => 0x80 + i).filter((b) => b !== 0x22 && b !== 0x2c));
    const source = Buffer.concat([cp1252("name,phone\r\n"), names, cp1252(",07400 100001\r\nRené,n/a\r\n")]);
    const sourcePath = await listFile("crm.csv", source);
    const { settings } = await prepare(sourcePath);
    const out = new PassThrough();
    const written = buffer(out);
    const results = { columns: ["carrier"], byIdentifier: new Map([["447400100001", ["Télécom €"]]]) };
    await joinResults({ sourcePath, settings, results, out });
    out.end();
    const expected = Buffer.concat([
      cp1252("name,phone,identifier,carrier,bulkcheck_status\r\n"),
      names,
      cp1252(",07400 100001,447400100001,Télécom €,checked\r\nRené,n/a,,,invalid\r\n"),
    ]);
    expect((await written).equals(expected)).toBe(true);
  });

  it("writes a UTF-16 source back in UTF-16 with its byte-order mark", async () => {
    const sourcePath = join(await tempDir(), "unicode.txt");
    await writeFile(sourcePath, Buffer.from("\ufeffname\tphone\r\nAmy\t07400 100001\r\n", "utf16le"));
    const { settings } = await prepare(sourcePath);
    const out = new PassThrough();
    const written = buffer(out);
    await joinResults({ sourcePath, settings, results: { columns: [], byIdentifier: new Map() }, out });
    out.end();
    const text = "\ufeffname\tphone\tidentifier\tbulkcheck_status\r\nAmy\t07400 100001\t447400100001\tno_result\r\n";
    expect((await written).equals(Buffer.from(text, "utf16le"))).toBe(true);
  });
});
