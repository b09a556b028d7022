import { describe, expect, it } from "vitest";
import { IdentifierSet } from "../../src/spec/identifier-set.js";
import { ResultFileError } from "../../src/results/errors.js";
import {
  checkTaskCounts,
  identifierValue,
  MAX_RESULT_VALUE_BYTES,
  resultBytesBound,
  ResultRowRules,
} from "../../src/results/result-rules.js";
import { readResults } from "../../src/results/read-results.js";
import { sourceOf } from "./helpers.js";

const TASK = { id: "t1", total: 3, success_cnt: 3, failure_cnt: 0 };

function codeOf(run: () => void): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof ResultFileError) return error.code;
    throw error;
  }
}

describe("identifierValue", () => {
  it.each([
    ["447400100001", 447400100001],
    ["1", 1],
    ["123456789012345", 123456789012345],
    ["", -1],
    ["0447400100001", -1],
    ["+447400100001", -1],
    ["44 7400 100001", -1],
    ["1234567890123456", -1],
    ["=1+1", -1],
    ["４４７", -1],
  ])("reads %j as %d", (text, value) => {
    expect(identifierValue(`x${text}x`, 1, text.length + 1)).toBe(value);
  });
});

describe("checkTaskCounts", () => {
  it.each([
    [{ id: "t", total: 20, success_cnt: 20, failure_cnt: 0 }, undefined],
    [{ id: "t", total: 20, success_cnt: 15, failure_cnt: 5 }, undefined],
    [{ id: "t", total: 20 }, undefined],
    [{ id: "t", total: 20, success_cnt: 200 }, "COUNTS_OVER_TOTAL"],
    [{ id: "t", total: 20, success_cnt: 15, failure_cnt: 6 }, "COUNTS_OVER_TOTAL"],
    [{ id: "t", total: 20, failure_cnt: 21 }, "COUNTS_OVER_TOTAL"],
  ])("%j: %s", (task, code) => {
    expect(codeOf(() => checkTaskCounts(task))).toBe(code);
  });
});

describe("ResultRowRules", () => {
  const accept = (rules: ResultRowRules, identifiers: readonly string[]): string | undefined =>
    codeOf(() => {
      identifiers.forEach((id, i) => rules.accept(i + 1, id, 0, id.length));
      rules.finish();
    });

  it("takes distinct identifiers up to the task's total", () => {
    expect(accept(new ResultRowRules("task t1", TASK, undefined), ["447400100001", "447400100002", "447400100003"])).toBeUndefined();
  });

  it.each([
    ["more rows than total", ["447400100001", "447400100002", "447400100003", "447400100004"], "ROWS_OVER_TOTAL"],
    ["a repeated identifier", ["447400100002", "447400100001", "447400100002"], "IDENTIFIER_REPEATED"],
    ["an identifier that is not one", ["447400100001", "447400 100002"], "IDENTIFIER_INVALID"],
  ])("refuses %s", (_what, identifiers, code) => {
    expect(accept(new ResultRowRules("task t1", TASK, undefined), identifiers)).toBe(code);
  });

  it("refuses an identifier that was not uploaded, where the uploaded ones are known", () => {
    const uploaded = new IdentifierSet();
    uploaded.firstLineOf(447400100001, 1);
    uploaded.firstLineOf(447400100002, 2);
    expect(accept(new ResultRowRules("task t1", TASK, uploaded), ["447400100002", "447400100001"])).toBeUndefined();
    expect(accept(new ResultRowRules("task t1", TASK, uploaded), ["447400100001", "447700900000"])).toBe("IDENTIFIER_NOT_UPLOADED");
  });

  it("counts no rows without a task, and checks the identifiers all the same", () => {
    const many = Array.from({ length: 50 }, (_, i) => String(447_400_100_000 + i));
    expect(accept(new ResultRowRules("result 1", undefined, undefined), many)).toBeUndefined();
    expect(accept(new ResultRowRules("result 1", undefined, undefined), ["+1"])).toBe("IDENTIFIER_INVALID");
  });
});

describe("resultBytesBound", () => {
  const GiB4 = 4 * 1024 ** 3;

  it("gives a task of 3 numbers a bound in kilobytes, growing with its numbers and the product's columns, never past the cap", () => {
    const signal = resultBytesBound(3, "number_activity_batch", GiB4);
    const carrier = resultBytesBound(3, "carrier_batch", GiB4);
    expect(signal).toBe(139_472);
    expect(carrier).toBe(180_472);
    expect(resultBytesBound(4, "number_activity_batch", GiB4) - signal).toBe(2 * (15 + 9 * (1 + MAX_RESULT_VALUE_BYTES) + 2));
    // A product it does not know is taken at the widest (carrier) row.
    expect(resultBytesBound(3, "some_new_batch", GiB4)).toBe(carrier);
    expect(resultBytesBound(500_000, "carrier_batch", GiB4)).toBe(GiB4);
  });

  it("holds every row of a task at the widest values, quoted, in UTF-16", () => {
    const value = `"${"é".repeat((MAX_RESULT_VALUE_BYTES - 2) / 2)}"`;
    const row = ["447400100001", ...Array(6 + 8).fill(value)].join(",");
    const file = Buffer.from(`\uFEFF${[row, row, row, row].join("\r\n")}\r\n`, "utf16le");
    expect(file.length).toBeLessThanOrEqual(resultBytesBound(3, "carrier_batch", GiB4));
  });

  it("stops a task's result of blank lines without end at its bound, before reading on", async () => {
    const task = { id: "t1", total: 3, success_cnt: 3, failure_cnt: 0 };
    const blankLines = `identifier,activated\n447400100001,true\n${"\n".repeat(200_000)}`;
    const read = async () => {
      for await (const _row of readResults([{ label: "task t1", task, open: sourceOf(blankLines, 64 * 1024) }], {
        serviceType: "number_activity_batch",
      }));
    };
    await expect(read()).rejects.toMatchObject({
      code: "RESULT_TOO_LARGE",
      message: "The result of task t1 is larger than 139472 bytes, more than a result of 3 number(s) can hold.",
    });
  });
});
