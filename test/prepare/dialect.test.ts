import { describe, expect, it } from "vitest";
import { detectHeader, looksLikePhone, sniffDelimiter, sniffLineEnding } from "../../src/prepare/dialect.js";
import { headerScore } from "../../src/prepare/header-names.js";
import { RecordReader } from "../../src/csv/record-reader.js";

const records = (text: string, delimiter: string | undefined) => {
  const reader = new RecordReader(delimiter);
  return [...reader.push(text), ...reader.end()];
};

describe("sniffDelimiter", () => {
  it.each([
    ["comma", "name,phone,notes\nAmy,07400 123456,x\nBob,07400 123457,y\n", "csv", ","],
    ["semicolon with decimal commas", "name;phone;score\nAmy;07400 123456;1,5\nBob;07400 123457;2\n", "csv", ";"],
    ["tab (Excel's Unicode text)", "name\tphone\nAmy\t07400 123456\nBob\t07400 123457\n", "txt", "\t"],
    ["pipe", "name|phone\nAmy|07400 123456\nBob|07400 123457\n", "", "|"],
    ["comma inside quotes only", '"Smith, Amy",07400 123456\n"Jones, Bob",07400 123457\n', "csv", ","],
    ["a plain list", "+44 7400 123456\n07400 123457\n447400123458\n", "txt", undefined],
    ["a plain list from stdin", "+44 7400 123456\n07400 123457\n", "", undefined],
    ["a one-column .csv", "phone\n07400 123456\n07400 123457\n", "csv", ","],
    ["a one-column .tsv", "phone\n07400 123456\n", "tsv", "\t"],
  ])("finds the delimiter of %s", (_name, text, extension, expected) => {
    expect(sniffDelimiter(text, true, extension)).toBe(expected);
  });
});

describe("sniffLineEnding", () => {
  it.each([
    ["a\r\nb", "\r\n"],
    ["a\nb", "\n"],
    ["a\rb", "\r"],
    ["a", "\n"],
  ])("finds the line end of %j", (text, expected) => {
    expect(sniffLineEnding(text)).toBe(expected);
  });
});

describe("detectHeader", () => {
  it.each([
    ["a named phone column", "id,name,phone\n1,Amy,07400 123456\n", "csv", true],
    ["text names over numbers", "Kunde,Rufnummer\nAmy,07400 123456\nBob,07400 123457\n", "csv", true],
    ["no header", "Amy,07400 123456\nBob,07400 123457\n", "csv", false],
    ["a first row holding a number", "1,07400 123456\n2,07400 123457\n", "csv", false],
    ["a plain list headed 'phone'", "phone\n07400 123456\n", "txt", true],
    ["a plain list headed 'MSISDN'", "MSISDN\n447400123456\n", "txt", true],
    ["a plain list starting with a stray word", "hello\n07400 123456\n", "txt", false],
    ["a plain list of numbers", "07400 123456\n07400 123457\n", "txt", false],
  ])("decides %s", (_name, text, kind, expected) => {
    const delimiter = kind === "csv" ? "," : undefined;
    expect(detectHeader(records(text, delimiter), kind as "csv" | "txt")).toBe(expected);
  });

  it.each([
    ["+44 7400 123456", true],
    ["4.47400E+11", true],
    ["'07400123456", true],
    ["12345", false],
    ["phone", false],
  ])("says whether %j looks like a phone number", (cell, expected) => {
    expect(looksLikePhone(cell)).toBe(expected);
  });
});

describe("headerScore", () => {
  it.each([
    ["phone", 2],
    ["Phone Number", 2],
    ["phone_number", 2],
    ["PhoneNumber", 2],
    ["telephone", 2],
    ["Tel", 2],
    ["TelNo", 2],
    ["mobile", 3],
    ["mobile_no", 3],
    ["MobileNo", 3],
    ["Mobile Phone", 3],
    ["cellphone", 3],
    ["Cell #", 3],
    ["MSISDN", 3],
    ["Number", 1],
    ["no", 1],
    ["Fax", 0],
    ["Phone Ext", 0],
    ["phone type", 0],
    ["Country Code", 0],
    ["Account Number", 0],
    ["name", 0],
    ["email", 0],
  ])("scores %j as %i", (name, score) => {
    expect(headerScore(name)).toBe(score);
  });
});
