import type { WorkbookPackage } from "./workbook-package.js";
import type { XmlHandlers } from "./workbook-xml.js";

/** What a cell's style says about showing its number: its format's code, and whether that shows a date. */
export interface NumberFormat {
  /** The format code (`00000000000`, `yyyy-mm-dd`); undefined for General. */
  code: string | undefined;
  date: boolean;
}

/** The number format of each cell style (a cell's `s` attribute indexes these); General beyond them. */
export interface CellFormats {
  of(style: number): NumberFormat;
}

const GENERAL: NumberFormat = { code: undefined, date: false };
export const GENERAL_FORMATS: CellFormats = { of: () => GENERAL };

/**
 * The built-in number formats a cell may name by id alone (ECMA-376 Part 1, §18.8.30) that
 * matter here: digits (1, 3: `0`, `#,##0`), text (49: `@`) and dates and times (14–22,
 * 45–47, and 27–36 and 50–58, the dates of East Asian locales).
 */
const BUILT_IN_CODES: ReadonlyMap<number, string> = new Map([
  [1, "0"],
  [3, "#,##0"],
  [49, "@"],
]);
function isBuiltInDate(id: number): boolean {
  return (id >= 14 && id <= 22) || (id >= 27 && id <= 36) || (id >= 45 && id <= 47) || (id >= 50 && id <= 58);
}

/** What a format code shows besides its tokens: quoted text, `\x` and `_x` `*x` (an escaped character, a space, a fill), `[Red]`, `[>100]`. */
const LITERALS = /"[^"]*"|\\.|_.|\*.|\[(?![hms]+\])[^\]]*\]/gi;

/**
 * Whether a number format code shows a date or a time: it has a day, month, year, hour or
 * second token once its literal text, escapes and bracketed colours and conditions are
 * removed (`[h]:mm`, elapsed hours, is a time; `[Red]0` is not).
 */
export function isDateFormat(code: string): boolean {
  return /[dmyhs]/i.test(code.replace(LITERALS, ""));
}

/**
 * Reads a styles part: the custom number formats (`numFmts`) and the cell styles (`cellXfs`)
 * that name them, into the format of each cell style.
 */
export async function readCellFormats(workbook: WorkbookPackage, part: string, signal?: AbortSignal): Promise<CellFormats> {
  const styles = new StylesPart();
  await workbook.parse(part, styles, signal);
  return styles.formats();
}

/** The handlers collecting a styles part's number formats (exported for tests). */
export class StylesPart implements XmlHandlers {
  readonly #codes = new Map<number, string>();
  readonly #styleFormatIds: number[] = [];
  /**
   * The elements open, outermost first: a `numFmt` counts only in the style sheet's `numFmts`
   * (a `dxf` has its own), an `xf` only in its `cellXfs` (not `cellStyleXfs`), and nothing in
   * an extension.
   */
  readonly #open: string[] = [];

  open(name: string, attributes: Readonly<Record<string, string>>): void {
    const depth = this.#open.push(name);
    if (depth !== 3) return;
    if (name === "numFmt" && this.#open[1] === "numFmts") {
      const id = Number(attributes.numFmtId);
      if (Number.isInteger(id) && attributes.formatCode !== undefined) this.#codes.set(id, attributes.formatCode);
    } else if (name === "xf" && this.#open[1] === "cellXfs") {
      this.#styleFormatIds.push(Number(attributes.numFmtId ?? 0));
    }
  }

  close(): void {
    this.#open.pop();
  }

  text(): void {}

  formats(): CellFormats {
    const formats = this.#styleFormatIds.map((id): NumberFormat => {
      const code = this.#codes.get(id) ?? BUILT_IN_CODES.get(id);
      if (code === undefined) return isBuiltInDate(id) ? { code: undefined, date: true } : GENERAL;
      return { code, date: isDateFormat(code) };
    });
    return { of: (style) => formats[style] ?? GENERAL };
  }
}
