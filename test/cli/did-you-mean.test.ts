import { describe, expect, it } from "vitest";
import { closestMatch } from "../../src/did-you-mean.js";
import { suggestCountry } from "../../src/prepare/country-names.js";
import { SERVICE_TYPES } from "../../src/spec/products.js";

describe("closestMatch", () => {
  it.each([
    ["Carrier_Batch", "carrier_batch"],
    ["CARRIER-BATCH", "carrier_batch"],
    ["carier_batch", "carrier_batch"],
    ["carrier_btach", "carrier_batch"],
    ["number_activty_batch", "number_activity_batch"],
    ["carrier", "carrier_batch"],
    ["validation", "number_validation_batch"],
    ["high value", "number_high_value_batch"],
  ])("suggests a product for --type %j: %s", (typed, meant) => {
    expect(closestMatch(typed, SERVICE_TYPES)).toBe(meant);
  });

  it.each(["number", "batch", "sms", "x", "", "global_carrier_batch"])("suggests nothing for %j, which could be many or none", (typed) => {
    expect(closestMatch(typed, SERVICE_TYPES)).toBeUndefined();
  });
});

describe("suggestCountry", () => {
  it.each([
    ["UK", "GB"],
    ["uk", "GB"],
    ["England", "GB"],
    ["Great Britain", "GB"],
    ["united kingdom", "GB"],
    ["Germany", "DE"],
    ["germny", "DE"],
    ["USA", "US"],
    ["+44", "GB"],
    ["44", "GB"],
    ["+1", "US"],
    ["0049", "DE"],
    ["EL", "GR"],
    ["cote d'ivoire", "CI"],
  ])("suggests for --country %j: %s", (typed, meant) => {
    expect(suggestCountry(typed)).toBe(meant);
  });

  it.each(["XX", "Q", "+999", "Korea"])("suggests nothing for %j", (typed) => {
    expect(suggestCountry(typed)).toBeUndefined();
  });
});
