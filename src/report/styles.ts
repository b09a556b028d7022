/**
 * The report's one style sheet, inline: system fonts only (nothing is fetched), and
 * print rules that fit the report on one or two A4 or Letter pages: smaller type,
 * the charts two to a row, and no figure or table split across pages.
 */
export const REPORT_CSS = `
:root { color-scheme: light; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1b1f24; margin: 24px auto; max-width: 980px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 20px 0 8px; padding-bottom: 2px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 14px; margin: 0 0 4px; }
p.meta { color: #57606a; margin: 0; }
table { border-collapse: collapse; margin: 4px 0 8px; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding-bottom: 2px; }
th, td { border-bottom: 1px solid #e4e7eb; padding: 2px 10px 2px 0; text-align: left; vertical-align: top; }
td.n, th.n { text-align: right; }
code, .id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
.path { overflow-wrap: anywhere; }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(400px, 1fr)); gap: 4px 32px; align-items: start; justify-items: start; }
figure { margin: 8px 0 12px; break-inside: avoid; }
figure svg { display: block; max-width: 100%; height: auto; }
.chart text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
.chart .label { font-size: 12px; fill: #1b1f24; }
.chart .value { font-size: 11px; fill: #57606a; }
.chart .inside { font-size: 11px; fill: #ffffff; }
.chart .bar { fill: #0969da; }
.chart .part-0 { fill: #1a7f37; }
.chart .part-1 { fill: #cf222e; }
.chart .part-2 { fill: #8c959f; }
.note { color: #57606a; font-size: 12px; }
footer { margin-top: 16px; color: #57606a; font-size: 11px; }
@page { size: auto; margin: 12mm; }
@media print {
  body { font-size: 9pt; margin: 0; max-width: none; padding: 0; }
  h1 { font-size: 15pt; }
  h2 { font-size: 11pt; margin: 8px 0 4px; break-after: avoid; }
  figure, table { break-inside: avoid; }
  .columns { grid-template-columns: 1fr 1fr; }
  * { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
}
`;
