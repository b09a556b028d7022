import { describe, expect, it } from "vitest";
import { carrierColumns, splitPlace } from "../../src/sandbox/enrichment.js";

describe("carrier enrichment", () => {
  it.each([
    ["447812345678", ["Orange", "Orange", "mobile", "GB", "", ""]],
    ["447400123456", ["Three", "Three", "mobile", "GB", "", ""]],
    ["442079460958", ["", "", "fixed_line", "GB", "", "London"]],
    ["4915112345678", ["T-Mobile", "T-Mobile", "mobile", "DE", "", ""]],
    ["498912345678", ["", "", "fixed_line", "DE", "", "Munich"]],
    ["919876543210", ["Airtel", "Airtel", "mobile", "IN", "", ""]],
    ["5511987654321", ["TIM", "TIM", "mobile", "BR", "São Paulo", ""]],
    ["551932345678", ["", "", "fixed_line", "BR", "SP", "Campinas"]],
    ["8613812345678", ["China Mobile", "China Mobile", "mobile", "CN", "Jiangsu", "Lianyungang"]],
    ["12125550100", ["", "", "fixed_line_or_mobile", "US", "NY", "New York"]],
    ["18005550100", ["", "", "toll_free", "US", "", ""]],
  ])("gives +%s realistic carrier, type, country and place values", (identifier, expected) => {
    expect(carrierColumns(identifier)).toEqual(expected);
  });

  it("reports the numbering region, not the calling code's main country (Guernsey under +44)", () => {
    expect(carrierColumns("447911123456")[3]).toBe("GG");
  });

  it.each([
    ["New York, NY", ", ", { city: "New York", region: "NY" }],
    ["São Paulo - SP", " - ", { city: "São Paulo", region: "SP" }],
    ["New Jersey", ", ", { city: "", region: "New Jersey" }],
    ["London", undefined, { city: "London", region: "" }],
    ["Lerwick, Foula & Fair Isle", undefined, { city: "Lerwick, Foula & Fair Isle", region: "" }],
  ] as const)("splits %j into city and region by the country's rule", (place, separator, expected) => {
    expect(splitPlace(place, separator)).toEqual(expected);
  });
});
