import { escapeHtml } from "./escape.js";

/** One bar of a chart: what it counts, and how many. */
export interface Bar {
  label: string;
  value: number;
}

/** One part of a 100% bar. */
export interface Part {
  label: string;
  value: number;
  /** A colour class of the style sheet (part-0 … part-2). */
  tone: number;
}

/** Drawn at about the width it is shown at, two to a row, so its text keeps the page's size. */
const WIDTH = 440;
const LABEL_WIDTH = 150;
const VALUE_WIDTH = 96;
const ROW_HEIGHT = 20;
const BAR_HEIGHT = 13;
/** Characters of a label drawn in a chart; the table under it has the whole name. */
const LABEL_CHARS = 24;

function shorten(label: string): string {
  return label.length <= LABEL_CHARS ? label : `${label.slice(0, LABEL_CHARS - 1)}…`;
}

/** "12.3%" of a total (0% of nothing). */
export function percent(value: number, total: number): string {
  return `${total === 0 ? "0.0" : ((value / total) * 100).toFixed(1)}%`;
}

function svg(height: number, title: string, body: string): string {
  return (
    // No xmlns: an HTML parser puts <svg> in the SVG namespace itself, and the page then names no URL at all.
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="${escapeHtml(title)}">` +
    `<title>${escapeHtml(title)}</title>${body}</svg>`
  );
}

/**
 * Horizontal bars, longest first as given: the label at the left, the count and its
 * share of `total` at the right. Pure SVG (no script, no fonts fetched), so it prints
 * and a reader without SVG skips it for the table under it.
 */
export function barChart(title: string, bars: readonly Bar[], total: number, formatValue: (n: number) => string): string {
  const most = Math.max(1, ...bars.map((bar) => bar.value));
  const room = WIDTH - LABEL_WIDTH - VALUE_WIDTH - 8;
  const rows = bars.map((bar, i) => {
    const y = i * ROW_HEIGHT;
    const width = Math.max(bar.value > 0 ? 1 : 0, Math.round((bar.value / most) * room));
    return (
      `<text class="label" x="${LABEL_WIDTH - 6}" y="${y + 15}" text-anchor="end">${escapeHtml(shorten(bar.label))}</text>\n` +
      `<rect class="bar" x="${LABEL_WIDTH}" y="${y + 4}" width="${width}" height="${BAR_HEIGHT}"/>` +
      `<text class="value" x="${LABEL_WIDTH + width + 4}" y="${y + 15}">${escapeHtml(formatValue(bar.value))} (${percent(bar.value, total)})</text>`
    );
  });
  return svg(Math.max(1, bars.length) * ROW_HEIGHT + 4, title, rows.join("\n"));
}

/**
 * One 100% bar per row (e.g. activated true/false per country), each part's share
 * written inside it where it fits, and a legend under the bars.
 */
export function shareChart(title: string, rows: ReadonlyArray<{ label: string; parts: readonly Part[] }>): string {
  const room = WIDTH - LABEL_WIDTH - 8;
  const lines = rows.map((row, i) => {
    const y = i * (ROW_HEIGHT + 6);
    const total = row.parts.reduce((sum, part) => sum + part.value, 0);
    let x = LABEL_WIDTH;
    const parts = row.parts.map((part) => {
      const width = total === 0 ? 0 : (part.value / total) * room;
      const share =
        width >= 44
          ? `<text class="inside" x="${(x + width / 2).toFixed(1)}" y="${y + 16}" text-anchor="middle">${percent(part.value, total)}</text>`
          : "";
      const drawn = `\n<rect class="part-${part.tone}" x="${x.toFixed(1)}" y="${y + 2}" width="${width.toFixed(1)}" height="${ROW_HEIGHT - 2}"/>${share}`;
      x += width;
      return drawn;
    });
    return `<text class="label" x="${LABEL_WIDTH - 6}" y="${y + 16}" text-anchor="end">${escapeHtml(shorten(row.label))}</text>${parts.join("")}`;
  });
  const legendY = rows.length * (ROW_HEIGHT + 6) + 6;
  const legend = (rows[0]?.parts ?? []).map(
    (part, i) =>
      `<rect class="part-${part.tone}" x="${LABEL_WIDTH + i * 80}" y="${legendY}" width="12" height="12"/>` +
      `<text class="label" x="${LABEL_WIDTH + i * 80 + 16}" y="${legendY + 11}">${escapeHtml(part.label)}</text>`,
  );
  return svg(legendY + 18, title, [...lines, ...legend].join("\n"));
}
