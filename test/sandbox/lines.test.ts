import { describe, expect, it } from "vitest";
import { LineCollector } from "../../src/sandbox/lines.js";

function collect(chunks: readonly Buffer[]): string[] {
  const collector = new LineCollector();
  for (const chunk of chunks) collector.push(chunk);
  collector.end();
  return collector.lines;
}

describe("splitting an upload into lines", () => {
  it("keeps non-blank lines across LF, CRLF and CR endings and drops blank ones", () => {
    expect(collect([Buffer.from("a\r\nb\n\n  \nc\rd")])).toEqual(["a", "b", "c", "d"]);
  });

  it("joins a line split across chunks, including a CRLF and a multi-byte character cut in half", () => {
    const bytes = Buffer.from("+44 7400 123456\r\n＋４４７４００１２３４５７\r\n");
    const cuts = [3, 16, 17, 22];
    const chunks = cuts.map((cut, i) => bytes.subarray(i === 0 ? 0 : cuts[i - 1], cut));
    chunks.push(bytes.subarray(cuts.at(-1)));
    expect(collect(chunks)).toEqual(["+44 7400 123456", "＋４４７４００１２３４５７"]);
  });

  it("treats a byte-order mark or non-breaking spaces alone on a line as blank", () => {
    expect(collect([Buffer.from("\ufeff\n\u00a0\n1\n")])).toEqual(["1"]);
  });
});
