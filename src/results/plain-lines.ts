import { delimitedLine, isFormulaStart, plainLinesMayHoldFormula } from "../csv/write.js";
import type { SourceRows } from "./result-rows.js";

/**
 * `text` with CRLF line ends made LF, when it is whole lines (it ends with a line feed)
 * holding no quote and no other carriage return: what copyPlainLines reads. Undefined
 * for anything else.
 */
export function plainLines(text: string): string | undefined {
  if (!text.endsWith("\n") || text.includes('"')) return undefined;
  const lf = text.includes("\r") ? text.replaceAll("\r\n", "\n") : text;
  return lf.includes("\r") ? undefined : lf;
}

/**
 * The download's fast case: plain lines (see plainLines) of a source whose columns
 * already are the output's, in order. Without quotes a comma always ends a field, so
 * each line is checked, counted and tallied by finding its commas, and written out as
 * it is: a run of such lines is one slice of the text, exactly what parsing and
 * rendering each row would give. An empty line is dropped, a short one padded with
 * empty fields, and one with a field that would start a formula written again through
 * delimitedLine, as in the general path.
 * @returns the output CSV, and how many lines `text` held.
 * @throws ResultFileError `ROW_TOO_WIDE`, or for a row that breaks the rules.
 */
export function copyPlainLines(text: string, rows: SourceRows): { csv: string; lines: number } {
  const tallied = rows.tallied;
  const formulas = plainLinesMayHoldFormula(text);
  const values = tallied.map(() => "");
  let csv = "";
  let copyFrom = 0;
  let lines = 0;
  let comma = -1;
  for (let start = 0; start < text.length; lines++) {
    const lf = text.indexOf("\n", start);
    if (lf === start) {
      csv += text.slice(copyFrom, start);
      copyFrom = start = lf + 1;
      continue;
    }
    let fields = 0;
    let next = 0;
    let identifierEnd = lf;
    let formula = false;
    for (let from = start; ; from = comma + 1) {
      if (comma < from) comma = nextComma(text, from);
      const end = Math.min(comma, lf);
      if (fields === 0) identifierEnd = end;
      if (formulas && from < end && isFormulaStart(text.charCodeAt(from))) formula = true;
      if (tallied[next] === fields) values[next++] = text.slice(from, end);
      fields++;
      if (end === lf) break;
    }
    while (next < values.length) values[next++] = "";
    rows.acceptPlain(fields, values, text, start, identifierEnd);
    const missing = rows.shape.width - fields;
    if (formula) {
      const row = text.slice(start, lf).split(",");
      while (row.length < rows.shape.width) row.push("");
      csv += text.slice(copyFrom, start) + delimitedLine(row, ",", false);
      copyFrom = lf + 1;
    } else if (missing > 0) {
      csv += text.slice(copyFrom, lf) + ",".repeat(missing);
      copyFrom = lf;
    }
    start = lf + 1;
  }
  return { csv: csv + text.slice(copyFrom), lines };
}

function nextComma(text: string, from: number): number {
  const at = text.indexOf(",", from);
  return at < 0 ? text.length : at;
}
