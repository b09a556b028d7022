import { terminalText } from "../../ansi.js";
import { count } from "../../format-count.js";
import type { PrepareResult } from "../../prepare/index.js";
import type { NoCodeNumbers } from "../../prepare/no-code.js";
import type { PrepareSummary } from "../../prepare/summary.js";
import type { Context } from "../context.js";

/** What the user hears of a list just read: which column, and whether its ambiguous digits were read by a convention it barely follows. */
export function notePreparation(ctx: Context, result: PrepareResult): void {
  noteColumn(ctx, result);
  warnMixedConventions(ctx, result);
}

/** Minority conventions at or above this share of the votes make reading ambiguous rows by the majority a guess worth a warning. */
const MIXED_SHARE = 0.3;

/**
 * Warns when ambiguous rows were read by a convention the list itself does not clearly
 * follow: the minority holds a good share of the votes, or a handful of nationally written
 * cells decided more rows than they are (the calling-code reading, the default, needs no
 * warning when few votes chose it).
 */
function warnMixedConventions(ctx: Context, { summary }: PrepareResult): void {
  const { total, resolved_by, votes } = summary.ambiguous;
  const all = votes.international + votes.national;
  if (resolved_by !== "convention" || total === 0 || all === 0) return;
  const way = summary.ambiguous.national > 0 ? "read nationally" : "read with their country code";
  if (Math.min(votes.international, votes.national) / all >= MIXED_SHARE) {
    ctx.printer.warn(
      `the list mixes conventions: ${count(votes.international)} cells read with their country code, ${count(votes.national)} read nationally; ` +
        `${count(total)} ambiguous rows were ${way}. Pass --digits-as to decide.`,
    );
  } else if (summary.ambiguous.national > votes.national) {
    ctx.printer.warn(
      `${count(summary.ambiguous.national)} ambiguous rows were read nationally on the evidence of only ${count(votes.national)} ` +
        `nationally written cells. Pass --digits-as to decide.`,
    );
  }
}

/** Says which column of a CSV (or which sheet and column of a workbook) the numbers were read from, and why that one. */
export function noteColumn(ctx: Context, { column, format }: PrepareResult): void {
  if (format.kind === "txt") return;
  const name = column.name === undefined ? "" : ` "${terminalText(column.name, { singleLine: true })}"`;
  const sheet = format.sheet === undefined ? "" : ` of sheet "${format.sheet}"`;
  ctx.printer.note(`Reading phone numbers from column ${column.index + 1}${name}${sheet} (${describeChoice(column.chosenBy)}).`);
}

function describeChoice(chosenBy: PrepareResult["column"]["chosenBy"]): string {
  switch (chosenBy) {
    case "option":
      return "chosen by --column";
    case "record":
      return "the column the list was submitted with";
    case "header":
      return "chosen by its header name; use --column to pick another";
    case "content":
      return "chosen by its content; use --column to pick another";
    case "only-column":
      return "chosen by being the only column";
    case "first-column":
      return "chosen by default: first column of a file without header; use --column to pick another";
  }
}

/**
 * With no country to read nationally written numbers in (carrier_batch without --country,
 * or --country auto without --default-country), they are all `no_code`. When they are a
 * good share of the list (see noCodeNumbers), the hint names the flag that keeps them, and
 * the country most numbers written with a code belong to, when most do. Undefined when
 * there is nothing to say.
 */
export function noCodeHint(noCode: NoCodeNumbers | undefined, anyRegion: boolean): string | undefined {
  if (noCode === undefined) return undefined;
  const flag = anyRegion ? "--default-country" : "--country";
  const found = `${count(noCode.numbers)} of ${count(noCode.of)} numbers have no country code, so they are excluded (no_code).`;
  if (noCode.main === undefined) return `${found} If they are of one country, ${flag} CC reads them as its numbers and keeps them.`;
  const { country, numbers, of } = noCode.main;
  const foreign = of - numbers;
  // Under --country auto every country is kept anyway; with one task country the others are then excluded.
  const then =
    anyRegion || foreign === 0
      ? ""
      : ` (the ${count(foreign)} of ${foreign === 1 ? "another country" : "other countries"} would then be excluded as other_country)`;
  return `${found} ${count(numbers)} of the ${count(of)} numbers written with a code are ${country}'s: ${flag} ${country} would read the ${count(noCode.numbers)} as ${country} numbers and keep them${then}.`;
}

/**
 * The preparation summary for humans: a compact block of at most ten aligned
 * lines, in the service's names. Rows read and kept always show; a class with
 * no rows is left out, so what needs a look stands out.
 */
export function printPreparationSummary(ctx: Context, result: PrepareResult): void {
  for (const line of preparationLines(result.summary)) ctx.printer.note(line);
}

function preparationLines(s: PrepareSummary): string[] {
  const rows: Array<[label: string, value: number | string, note?: string]> = [
    ["rows read", s.rows_read, notes(readNotes(s))],
    ["kept (to check)", s.kept, notes(keptNotes(s))],
  ];
  const optional: Array<[string, number]> = [
    ["invalid_cnt", s.invalid_cnt],
    ["no_code_cnt", s.no_code_cnt],
    ["other_country_cnt", s.other_country_cnt],
    ["duplicate_cnt", s.duplicate_cnt],
    ["below_min_task", s.below_min_task ?? 0],
    ["blank", s.blank],
    ["extensions_dropped", s.extensions_dropped],
    ["spreadsheet_expanded", s.spreadsheet_expanded],
  ];
  rows.push(...optional.filter(([, n]) => n > 0));
  const { ambiguous: a } = s;
  if (a.total > 0) {
    const votes = `votes ${count(a.votes.international)} international, ${count(a.votes.national)} national`;
    rows.push([
      "ambiguous",
      `${count(a.total)}: ${count(a.international)} international, ${count(a.national)} national (by ${a.resolved_by}; ${votes})`,
    ]);
  }
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const numbers = rows.map(([, value]) => (typeof value === "number" ? count(value) : value));
  const valueWidth = Math.max(...numbers.filter((_, i) => typeof rows[i]![1] === "number").map((text) => text.length));
  return rows.map(([label, value, note = ""], i) => {
    const text = typeof value === "number" ? numbers[i]!.padStart(valueWidth) : numbers[i]!;
    return `${label.padEnd(labelWidth)}  ${text}${note}`;
  });
}

/** What qualifies the rows read: how many were lines the service would count, and an encoding other than UTF-8. */
function readNotes(s: PrepareSummary): string[] {
  const found: string[] = [];
  if (s.blank > 0) found.push(`submitted_lines ${count(s.submitted_lines)}: not blank`);
  if (s.encoding !== "utf8" || s.encoding_source === "forced") found.push(`encoding ${s.encoding}, ${s.encoding_source}`);
  return found;
}

/** What qualifies the kept rows: those written nationally, and regions that only share the calling code. */
function keptNotes(s: PrepareSummary): string[] {
  const found: string[] = [];
  if (s.national_normalised > 0) found.push(`national_normalised ${count(s.national_normalised)}`);
  const regions = Object.entries(s.shared_code_regions).map(([region, n]) => `${region} ${count(n)}`);
  if (regions.length > 0) found.push(`shared_code_regions ${regions.join(", ")}`);
  return found;
}

function notes(found: readonly string[]): string {
  return found.length === 0 ? "" : `  (${found.join("; ")})`;
}
