import { describe, expect, it } from "vitest";
import { RecordReader, type SourceRecord } from "../../src/csv/record-reader.js";
import { mulberry32 } from "../../src/sandbox/random.js";

/** Text made of the characters that matter to the reader: quotes, delimiters, line ends, spaces, letters. */
function messyText(random: () => number, length: number, delimiter: string): string {
  const pieces = ['"', '""', delimiter, "\n", "\r\n", "\r", " ", "a", "07400 123456", `"quoted${delimiter} field"`, '"two\nlines"', "'"];
  let text = "";
  while (text.length < length) text += pieces[Math.floor(random() * pieces.length)];
  return text;
}

type Outcome = { records: SourceRecord[] } | { error: string };

function readWhole(text: string, delimiter: string | undefined): Outcome {
  try {
    const reader = new RecordReader(delimiter);
    return { records: [...reader.push(text), ...reader.end()] };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** Cuts the text into blocks at `cuts` with pushBlock, then parses each block with a fresh reader from its first line. */
function readBlocks(text: string, delimiter: string | undefined, cuts: number[]): Outcome {
  try {
    const splitter = new RecordReader(delimiter);
    const blocks = [];
    let from = 0;
    for (const cut of [...cuts, text.length]) {
      blocks.push(splitter.pushBlock(text.slice(from, cut)));
      from = cut;
    }
    blocks.push(splitter.endBlock());
    const records = blocks.flatMap((block) => {
      const reader = new RecordReader(delimiter, block.firstLine);
      return [...reader.push(block.text), ...reader.end()];
    });
    return { records };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe("RecordReader.pushBlock (the cut that lets workers parse)", () => {
  it.each([",", ";", "\t", undefined])(
    "cuts generated text (delimiter %j) so that blocks parse to exactly the file's records, or fail alike",
    (delimiter) => {
      const random = mulberry32(delimiter === undefined ? 99 : delimiter.charCodeAt(0));
      let compared = 0;
      let errors = 0;
      for (let round = 0; round < 400; round++) {
        const text = messyText(random, 20 + Math.floor(random() * 300), delimiter ?? ",");
        const cuts = Array.from({ length: Math.floor(random() * 6) }, () => Math.floor(random() * text.length)).sort((a, b) => a - b);
        const whole = readWhole(text, delimiter);
        expect(readBlocks(text, delimiter, cuts), JSON.stringify({ text, cuts })).toEqual(whole);
        if ("records" in whole) compared += whole.records.length;
        else errors++;
      }
      expect(compared).toBeGreaterThan(1000);
      // Broken quoting must be refused the same way too.
      if (delimiter !== undefined) expect(errors).toBeGreaterThan(10);
    },
  );

  it("gives each block the line its first record starts on", () => {
    const splitter = new RecordReader(",");
    const a = splitter.pushBlock('h1,h2\r\n1,"x\r\ny"\r\n2,');
    const b = splitter.pushBlock("z\r\n3,w");
    const c = splitter.endBlock();
    expect([a, b, c]).toEqual([
      { text: 'h1,h2\r\n1,"x\r\ny"\r\n', firstLine: 1 },
      { text: "2,z\r\n", firstLine: 4 },
      { text: "3,w", firstLine: 5 },
    ]);
  });
});
