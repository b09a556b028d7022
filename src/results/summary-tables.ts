import type { SummaryTable } from "./format-xlsx.js";
import type { Tally, ValueCount } from "./tally.js";

/** How an empty value (the service sent none) is shown in a summary. */
export const EMPTY_VALUE = "(empty)";

function valueRows(values: readonly ValueCount[]): Array<[string, number]> {
  return values.map(({ value, count }) => [value === "" ? EMPTY_VALUE : value, count]);
}

/**
 * The rows' counts as the small tables of an xlsx Summary sheet: rows written, then
 * the `activated` split for a signal product, or top carriers, number types, regions
 * and the carrier/underlying-carrier differences for the carrier product.
 */
export function tallyTables(tally: Tally): SummaryTable[] {
  const tables: SummaryTable[] = [{ heading: ["Rows", "Count"], rows: [["Rows written", tally.rows]] }];
  if (tally.signal) {
    const { true: yes, false: no, other } = tally.signal;
    tables.push({
      heading: ["activated", "Rows"],
      rows: [["true", yes], ["false", no], ...(other > 0 ? [["other", other] as const] : [])],
    });
  }
  if (tally.carrier) {
    const { topCarriers, topNumberTypes, topRegions, differences } = tally.carrier;
    tables.push(
      { heading: ["Top carriers", "Rows"], rows: valueRows(topCarriers) },
      { heading: ["Number types", "Rows"], rows: valueRows(topNumberTypes) },
      { heading: ["Top regions", "Rows"], rows: valueRows(topRegions) },
      {
        heading: ["Carrier", "Underlying carrier", "Rows"],
        rows: [
          ...differences.top.map(({ carrier, underlyingCarrier, count }) => [carrier, underlyingCarrier, count]),
          ["All rows whose carriers differ", "", differences.rows],
        ],
      },
    );
  }
  return tables;
}
