import { count } from "../format-count.js";
import { EMPTY_VALUE } from "../results/summary.js";
import type { SignalCounts, ValueCount } from "../results/tally.js";
import { formatUsd } from "../tasks/cost.js";
import { barChart, percent, shareChart, type Part } from "./charts.js";
import { escapeHtml as h } from "./escape.js";
import type { ReportModel } from "./model.js";
import { REPORT_CSS } from "./styles.js";

type Cell = string | number;

/** A table with a header row; numbers are grouped (1,234) and right-aligned. Cells are text, escaped here. */
function table(id: string, caption: string, head: readonly string[], rows: ReadonlyArray<readonly Cell[]>): string {
  const cell = (tag: "td" | "th", value: Cell) =>
    typeof value === "number" ? `<${tag} class="n">${count(value)}</${tag}>` : `<${tag}>${h(value)}</${tag}>`;
  const header = `<tr>${head.map((name, i) => `<th${i > 0 && typeof rows[0]?.[i] === "number" ? ' class="n"' : ""}>${h(name)}</th>`).join("")}</tr>`;
  const body = rows.map((row) => `<tr>${row.map((value) => cell("td", value)).join("")}</tr>`).join("");
  return `<table id="${id}"><caption>${h(caption)}</caption><thead>${header}</thead><tbody>${body}</tbody></table>`;
}

/** Label/value pairs as a two-column table whose first column is a row header. */
function facts(id: string, caption: string, pairs: ReadonlyArray<readonly [string, Cell]>): string {
  const rows = pairs.map(
    ([label, value]) =>
      `<tr><th scope="row">${h(label)}</th>${typeof value === "number" ? `<td class="n">${count(value)}</td>` : `<td>${h(value)}</td>`}</tr>`,
  );
  return `<table id="${id}"><caption>${h(caption)}</caption><tbody>${rows.join("")}</tbody></table>`;
}

function figure(id: string, heading: string, chart: string, numbers: string): string {
  return `<figure id="${id}"><h3>${h(heading)}</h3>${chart}<figcaption>${numbers}</figcaption></figure>`;
}

const shown = (value: string) => (value === "" ? EMPTY_VALUE : value);

function runSection(model: ReportModel): string {
  const pairs: Array<readonly [string, Cell]> = [
    ["Product", model.product],
    ["Countries", model.countries.join(", ") || "none given"],
    ["Tasks", model.tasks.length],
  ];
  for (const source of model.sources) pairs.push(["List submitted", source]);
  if (model.resultsPath !== undefined) pairs.push(["Results file", model.resultsPath]);
  const tasks = table(
    "tasks",
    "Tasks",
    ["Task", "Status", "Country", "Created", "Lines", "Numbers", "With result", "Without result"],
    model.tasks.map((task) => [
      task.id,
      task.status,
      task.country,
      readableTime(task.created_at),
      task.submitted_lines ?? task.total,
      task.total,
      task.success_cnt ?? "",
      task.failure_cnt ?? "",
    ]),
  );
  return `<section id="run"><h2>The run</h2>${facts("run-facts", "Summary", pairs)}${tasks}</section>`;
}

function preparationSection(model: ReportModel): string {
  const prep = model.preparation;
  const service =
    model.excludedByService.length > 0
      ? table("service-excluded", "Excluded by the service while preparing", ["Class", "Lines"], model.excludedByService)
      : "";
  if (!prep) {
    return `<section id="preparation"><h2>Local preparation</h2><p class="note">This machine's store holds no preparation for these tasks (they were submitted elsewhere, or with an older bulkcheck).</p>${service}</section>`;
  }
  const rows: Array<readonly [string, number]> = [
    ["Rows read", prep.rows_read],
    ["Kept", prep.kept],
    ["Excluded: invalid", prep.invalid_cnt],
    ["Excluded: no country code", prep.no_code_cnt],
    ["Excluded: other country", prep.other_country_cnt],
    ["Excluded: duplicate", prep.duplicate_cnt],
    ["Excluded: blank", prep.blank],
    ...(prep.below_min_task === undefined ? [] : ([["Excluded: country below the minimum task size", prep.below_min_task]] as const)),
  ];
  return `<section id="preparation"><h2>Local preparation</h2><div class="columns">${facts("preparation-table", "Rows of the list", rows)}${service}</div></section>`;
}

/** "from 2025-01-14 09:00 UTC to 2025-01-15 09:00 UTC", or "at …" when both are the same minute. */
function span(oldest: string, newest: string): string {
  const [from, to] = [readableTime(oldest), readableTime(newest)];
  return from === to ? `at ${from}` : `from ${from} to ${to}`;
}

/**
 * Where the output's rows came from: the list's kept numbers, those the ledger served
 * (and when they were checked), those uploaded (padding among them), what the service
 * gave them, and the rows; and, when reused rows are not in it, why.
 */
function outputSection(model: ReportModel): string {
  const pairs = model.numbers.map(
    (line) =>
      [line.checked ? `${line.label}, checked ${span(line.checked.oldest, line.checked.newest)}` : line.label, line.numbers] as const,
  );
  const unread =
    model.unreadLists.length > 0
      ? ` The list of the run is gone or has changed since: ${model.unreadLists.join(", ")}.`
      : " A download writes the tasks' own rows; bulkcheck report of these tasks adds the ledger's, as long as the run's list is unchanged and the ledger still holds them.";
  const missing = model.numbers.find((line) => line.id === "reused-elsewhere");
  const note = missing
    ? `<p class="note">${count(missing.numbers)} numbers the run reused from the ledger have no row in this output, so the figures and charts leave them out.${h(unread)}</p>`
    : "";
  return `<section id="output"><h2>The output</h2>${facts("numbers-table", "Numbers, and where their rows come from", pairs)}${note}</section>`;
}

/** "$0.051 less than estimated (98.5% of the estimate)": the difference in words, never a bare minus sign. */
function comparedWithEstimate(chargedMicros: number, estimateMicros: number): string {
  const difference = chargedMicros - estimateMicros;
  const share = `${percent(chargedMicros, estimateMicros)} of the estimate`;
  if (difference === 0) return `as estimated (${share})`;
  return `${formatUsd(Math.abs(difference))} ${difference < 0 ? "less" : "more"} than estimated (${share})`;
}

function moneySection(model: ReportModel): string {
  const m = model.money;
  const pairs: Array<readonly [string, string]> = [["Price per number", formatUsd(m.priceMicros)]];
  if (m.estimateMicros !== undefined) pairs.push(["Estimate before submitting", formatUsd(m.estimateMicros)]);
  pairs.push(["Reserved at submit", formatUsd(m.reservedMicros)]);
  if (m.padding.numbers > 0) {
    pairs.push([
      `Of which padding (${count(m.padding.numbers)} fresh results checked again to fill a task to the minimum size)`,
      formatUsd(m.padding.micros),
    ]);
  }
  pairs.push(
    [`Charged (${count(m.checked)} checked now)`, formatUsd(m.chargedMicros)],
    [`Refunded (${count(m.noResult)} without result, and what the service did not check)`, formatUsd(m.refundedMicros)],
  );
  if (m.saved.numbers > 0) {
    pairs.push([
      `Saved by reusing (${count(m.saved.numbers)} numbers checked within --max-age, not checked again)`,
      formatUsd(m.saved.micros),
    ]);
  }
  if (m.estimateMicros !== undefined)
    pairs.push(["Charged, compared with the estimate", comparedWithEstimate(m.chargedMicros, m.estimateMicros)]);
  return `<section id="money"><h2>Money</h2>${facts("money-table", "USD, at the configured prices", pairs)}</section>`;
}

const SIGNAL_PARTS = (counts: SignalCounts): Part[] => [
  { label: "true", value: counts.true, tone: 0 },
  { label: "false", value: counts.false, tone: 1 },
  ...(counts.other > 0 ? [{ label: "other", value: counts.other, tone: 2 }] : []),
];

function signalResults(model: ReportModel, signal: NonNullable<ReportModel["signal"]>): string {
  const rows = [{ label: "All", counts: signal.all }, ...signal.byCountry.map(({ country, counts }) => ({ label: country, counts }))];
  const withOther = rows.some((row) => row.counts.other > 0);
  const chart = shareChart(
    "activated: true and false share",
    rows.map((row) => ({ label: row.label, parts: SIGNAL_PARTS(row.counts) })),
  );
  const numbers = table(
    "activated-table",
    "activated, rows",
    ["Country", "true", "false", ...(withOther ? ["other"] : []), "true share"],
    rows.map(({ label, counts }) => [
      label,
      counts.true,
      counts.false,
      ...(withOther ? [counts.other] : []),
      percent(counts.true, counts.true + counts.false + counts.other),
    ]),
  );
  return figure("activated-chart", `activated (${model.product})`, chart, numbers);
}

function valueFigure(id: string, heading: string, column: string, values: readonly ValueCount[], rows: number): string {
  const bars = values.map(({ value, count: n }) => ({ label: shown(value), value: n }));
  const chart = barChart(heading, bars, rows, count);
  const numbers = table(
    `${id}-table`,
    `${heading}, rows`,
    [column, "Rows", "Share"],
    bars.map((bar) => [bar.label, bar.value, percent(bar.value, rows)]),
  );
  return figure(`${id}-chart`, heading, bars.length > 0 ? chart : "", numbers);
}

function carrierResults(model: ReportModel, carrier: NonNullable<ReportModel["carrier"]>): string {
  const { differences } = carrier;
  const pairs = differences.top.map((pair) => ({ label: `${pair.carrier} → ${pair.underlyingCarrier}`, value: pair.count }));
  const diffTable = table(
    "differences-table",
    `Carrier differs from the underlying carrier: ${count(differences.rows)} rows (${percent(differences.rows, model.rows)})`,
    ["Carrier", "Underlying carrier", "Rows"],
    differences.top.map((pair) => [pair.carrier, pair.underlyingCarrier, pair.count]),
  );
  const diffChart =
    pairs.length > 0
      ? barChart("Carrier vs underlying carrier", pairs, model.rows, count)
      : '<p class="note">No row names a carrier that differs from its underlying carrier.</p>';
  return (
    '<div class="columns">' +
    valueFigure("number-types", "Number types", "Number type", carrier.topNumberTypes, model.rows) +
    valueFigure("carriers", "Top carriers", "Carrier", carrier.topCarriers, model.rows) +
    valueFigure("regions", "Top regions", "Region", carrier.topRegions, model.rows) +
    figure("differences-chart", "Carrier vs underlying carrier (ported numbers)", diffChart, diffTable) +
    "</div>"
  );
}

function resultsSection(model: ReportModel): string {
  const reused =
    model.reusedRows > 0 ? `: ${count(model.reusedRows)} from the ledger, ${count(model.rows - model.reusedRows)} checked now` : "";
  const intro = `<p>${count(model.rows)} result rows${reused}.</p>`;
  const body = model.signal ? signalResults(model, model.signal) : model.carrier ? carrierResults(model, model.carrier) : "";
  return `<section id="results" class="results"><h2>Results</h2>${intro}${body}</section>`;
}

/**
 * What changed since each number's previous check: per column, how many numbers, and
 * the most common transitions (`activated true → false: 312`).
 */
function changesSection(changes: NonNullable<ReportModel["changes"]>): string {
  const intro =
    changes.compared === 0
      ? "<p>None of these numbers had a previous result in the ledger, so none can have changed.</p>"
      : `<p>${count(changes.numbers)} of ${count(changes.compared)} numbers checked before have a result that changed.</p>`;
  const rows = changes.columns.flatMap((column) =>
    column.transitions.map(
      (transition) => [column.column, `${shown(transition.previous)} → ${shown(transition.current)}`, transition.count] as const,
    ),
  );
  const byColumn = table(
    "changes-by-column",
    "Changed numbers per column",
    ["Column", "Numbers"],
    changes.columns.map((column) => [column.column, column.numbers]),
  );
  const transitions = table("changes", "Most common changes", ["Column", "Change", "Numbers"], rows);
  return `<section id="changed"><h2>Changed since the previous check</h2>${intro}<div class="columns">${byColumn}${transitions}</div></section>`;
}

/** "2025-01-15T09:00:00.000Z" → "2025-01-15 09:00 UTC"; anything else as it is. */
function readableTime(iso: string): string {
  const match = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(:\d\d(\.\d+)?)?Z$/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}

/**
 * The report as one self-contained HTML page: inline CSS and SVG, no script and
 * nothing fetched. Every chart's numbers are in a table under it, so a reader that
 * shows no SVG (a plain-text mail view) still has them all. A chain's report (`later`:
 * its later products) has the same sections for each product in turn, under its name.
 */
export function renderReport(model: ReportModel, later: readonly ReportModel[] = []): string {
  const products = [model, ...later];
  const countryList = [...new Set(products.flatMap((product) => product.countries))];
  const countries = countryList.length > 0 ? ` · ${countryList.join(", ")}` : "";
  const title = `bulkcheck report: ${products.map((product) => product.product).join(", then ")}${countries}`;
  const tasks = products.reduce((sum, product) => sum + product.tasks.length, 0);
  return [
    "<!DOCTYPE html>",
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${h(title)}</title><style>${REPORT_CSS}</style></head><body>`,
    `<header><h1>${h(title)}</h1><p class="meta">${count(tasks)} task(s) · made ${h(readableTime(model.generatedAt))}</p></header>`,
    ...(later.length === 0 ? productSections(model) : products.map(chainedProduct)),
    "<footer>Made by bulkcheck from the service's task records, this machine's store of runs and the result files; prices from the config.</footer>",
    "</body></html>",
    "",
  ].join("\n");
}

function productSections(model: ReportModel): string[] {
  return [
    runSection(model),
    preparationSection(model),
    outputSection(model),
    moneySection(model),
    resultsSection(model),
    model.changes ? changesSection(model.changes) : "",
  ];
}

/** One product of a chain's report, its sections' ids made its own (`p2-money`): the page has each product's. */
function chainedProduct(model: ReportModel, index: number): string {
  const sections = productSections(model)
    .join("\n")
    .replaceAll(' id="', ` id="p${index + 1}-`);
  return `<article class="product" id="product-${index + 1}"><h2 class="product">${index + 1}. ${h(model.product)}</h2>\n${sections}</article>`;
}
