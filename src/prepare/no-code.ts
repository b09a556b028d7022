import { mainCountryOf, type MainCountry } from "./country-groups.js";
import type { PrepareResult } from "./prepare-list.js";

/** No country code in at least this share of the lines: worth saying how to keep them. */
const NO_CODE_SHARE = 0.05;

/** The numbers without a country code, of the list's submitted lines, and the country most numbers written with one belong to. */
export interface NoCodeNumbers {
  numbers: number;
  of: number;
  /** Undefined when no country holds more than half of the numbers written with a code. */
  main: MainCountry | undefined;
}

/**
 * With no country to read nationally written numbers in, they are all `no_code`. When they
 * are a good share of the list: how many, and the country most numbers written with a code
 * belong to, when most do (the evidence for reading them as that country's). Reads the
 * upload lists: call it while they still exist. Undefined when there is nothing to say.
 */
export async function noCodeNumbers(result: PrepareResult): Promise<NoCodeNumbers | undefined> {
  const { no_code_cnt, submitted_lines } = result.summary;
  if (result.settings.country !== undefined || no_code_cnt === 0 || no_code_cnt < NO_CODE_SHARE * submitted_lines) return undefined;
  return { numbers: no_code_cnt, of: submitted_lines, main: await mainCountryOf(result.chunks) };
}
