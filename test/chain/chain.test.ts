import { describe, expect, it } from "vitest";
import { parseChain, parseThen, stepKey } from "../../src/chain/chain.js";
import { UsageError } from "../../src/errors.js";

describe("--then as given", () => {
  it("reads a product alone, and a condition on the nearest earlier product that has its column", () => {
    expect(parseThen("number_activity_batch", ["carrier_batch"])).toEqual({ product: "number_activity_batch" });
    expect(parseThen("number_activity_batch:number_type=Mobile, fixed_line_or_mobile", ["carrier_batch"])).toEqual({
      product: "number_activity_batch",
      condition: { product: "carrier_batch", column: "number_type", values: ["mobile", "fixed_line_or_mobile"] },
    });
    expect(parseChain("carrier_batch", ["number_validation_batch", "number_high_value_batch:activated=TRUE"])).toEqual([
      { product: "number_validation_batch" },
      { product: "number_high_value_batch", condition: { product: "number_validation_batch", column: "activated", values: ["true"] } },
    ]);
    // The service's other name of the carrier product is the same product.
    expect(() => parseChain("carrier_batch", ["global_carrier_batch"])).toThrow(/already in the chain/);
  });

  it.each([
    ["number_activity_batch:carrier_name=EE", /no product before number_activity_batch in this chain has a column "carrier_name"/],
    ["number_activity_batch:activated=true", /has a column "activated"/],
    ["number_activity_batch:number_type", /a condition is COLUMN=VALUE/],
    ["number_activity_batch:number_type=", /a condition is COLUMN=VALUE/],
    ["phone_batch", /"phone_batch" is not a product/],
    ["carrier_batch", /already in the chain/],
  ])("refuses --then %s as a usage error", (spec, message) => {
    const refused = (() => {
      try {
        parseThen(spec, ["carrier_batch"]);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as Error).message).toMatch(message);
  });

  it("gives each later product's run a key of the chain up to it, told apart by its condition", () => {
    const mobiles = parseChain("carrier_batch", ["number_activity_batch:number_type=mobile"]);
    const all = parseChain("carrier_batch", ["number_activity_batch"]);
    expect(stepKey("carrier_batch", mobiles, 0)).not.toBe(stepKey("carrier_batch", all, 0));
    expect(stepKey("carrier_batch", mobiles, 0)).toBe(
      stepKey("carrier_batch", parseChain("carrier_batch", ["number_activity_batch:number_type=MOBILE"]), 0),
    );
  });
});
