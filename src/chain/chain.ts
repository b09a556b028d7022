import { createHash } from "node:crypto";
import { UsageError } from "../errors.js";
import { canonicalServiceType, resultColumns, SERVICE_TYPES, type ServiceType } from "../spec/products.js";

/*
 * A chain: several products in one run (`submit --type A --then B[:COLUMN=VALUE,...]`). The
 * first product is checked on every number the run keeps; each later one on every number,
 * or only on those whose result of an earlier product has one of the values in the column
 * its condition names.
 */

/** Which numbers a later product is checked on: those whose result of `product` has one of `values` in `column`. */
export interface ChainCondition {
  product: ServiceType;
  column: string;
  /** Compared without case and surrounding spaces, as people read them (`activated=TRUE` is `true`). */
  values: readonly string[];
}

/** A product of a chain after the first, and which numbers it is checked on (all without a condition). */
export interface ChainStep {
  product: ServiceType;
  condition?: ChainCondition;
}

/**
 * One `--then` as given, read against the products before it: `PRODUCT` or
 * `PRODUCT:COLUMN=VALUE[,VALUE...]`. The column is read from the nearest earlier product
 * that has it. Everything wrong with it is a usage error, before anything is read or spent.
 */
export function parseThen(spec: string, earlier: readonly ServiceType[]): ChainStep {
  const colon = spec.indexOf(":");
  const name = (colon < 0 ? spec : spec.slice(0, colon)).trim();
  const product = canonicalServiceType(name);
  if (!product) {
    throw new UsageError(`--then ${spec}: "${name}" is not a product.`, { hint: `The products: ${SERVICE_TYPES.join(", ")}.` });
  }
  if (earlier.includes(product)) {
    throw new UsageError(`--then ${spec}: ${product} is already in the chain; each product is checked once in a run.`);
  }
  if (colon < 0) return { product };
  const test = spec.slice(colon + 1);
  const equals = test.indexOf("=");
  const column = (equals < 0 ? "" : test.slice(0, equals)).trim();
  const values = (equals < 0 ? [] : test.slice(equals + 1).split(","))
    .map((value) => value.trim().toLowerCase())
    .filter((value) => value !== "");
  if (column === "" || values.length === 0) {
    throw new UsageError(`--then ${spec}: a condition is COLUMN=VALUE[,VALUE...], e.g. number_type=mobile,fixed_line_or_mobile.`);
  }
  const source = [...earlier].reverse().find((candidate) => productColumns(candidate).includes(column));
  if (!source) {
    const known = [...new Set(earlier.flatMap(productColumns))];
    throw new UsageError(`--then ${spec}: no product before ${product} in this chain has a column "${column}".`, {
      hint: `Their columns: ${known.join(", ")}.`,
    });
  }
  return { product, condition: { product: source, column, values } };
}

/** The chain a command asks for: its first product (--type), then each --then in order. */
export function parseChain(first: ServiceType, thens: readonly string[]): ChainStep[] {
  const steps: ChainStep[] = [];
  for (const spec of thens) steps.push(parseThen(spec, [first, ...steps.map((step) => step.product)]));
  return steps;
}

/** The columns a condition may read: a product's result columns after `identifier`. */
function productColumns(product: ServiceType): readonly string[] {
  return resultColumns(product).slice(1);
}

/** Whether a result's value in the condition's column selects its number. */
export function conditionHolds(condition: ChainCondition, value: string | undefined): boolean {
  return value !== undefined && condition.values.includes(value.trim().toLowerCase());
}

/** A condition as a user would write it: `number_type=mobile,fixed_line_or_mobile`. */
export function describeCondition(condition: ChainCondition): string {
  return `${condition.column}=${condition.values.join(",")}`;
}

/**
 * What tells a later product's run apart from the same product's run of the list on its
 * own, and from another chain's: the products before it and every condition up to it.
 * Part of the run's identity (see runIdentity), so a chain carried on finds each step's run.
 */
export function stepKey(first: ServiceType, steps: readonly ChainStep[], index: number): string {
  const path = [
    first,
    ...steps.slice(0, index + 1).map((step) => (step.condition ? `${step.product}:${describeCondition(step.condition)}` : step.product)),
  ];
  return createHash("sha256").update(path.join(">")).digest("hex").slice(0, 32);
}

/** The short name a later product's columns start with in an output: `activity_activated`, `activity_status`. */
export const PRODUCT_COLUMN_PREFIX: Readonly<Record<ServiceType, string>> = {
  number_validation_batch: "validation",
  number_activity_batch: "activity",
  number_high_value_batch: "high_value",
  number_ecommerce_batch: "ecommerce",
  carrier_batch: "carrier",
};
