import { compile, search } from "jmespath";
import { UsageError } from "../errors.js";
import type { JsonFilter } from "./printer.js";

/**
 * The JMESPath functions (the specification's built-ins, all that jmespath 0.16 knows): an
 * expression naming another is refused before the command runs, since the library only
 * finds out when it evaluates the call, after the work.
 */
const FUNCTIONS: ReadonlySet<string> = new Set([
  "abs",
  "avg",
  "ceil",
  "contains",
  "ends_with",
  "floor",
  "join",
  "keys",
  "length",
  "map",
  "max",
  "max_by",
  "merge",
  "min",
  "min_by",
  "not_null",
  "reverse",
  "sort",
  "sort_by",
  "starts_with",
  "sum",
  "to_array",
  "to_number",
  "to_string",
  "type",
  "values",
]);

const SYNTAX_HINT = "Examples: bulkcheck help query; the syntax: https://jmespath.org/specification.html";

/**
 * `--query EXPR`: the JMESPath expression every JSON object a command prints goes through
 * (each line of the commands that print several, as gh's --jq does). The jmespath package
 * (58 KB, no dependencies) is loaded with this module, which services.ts imports only when
 * the flag is given: see docs/performance.md for why JMESPath rather than jq compiled to
 * WebAssembly.
 * @throws UsageError (exit 2) without --json, or for an expression that does not parse or
 *   calls a function JMESPath does not have: before the command does anything.
 */
export function jsonQuery(expression: string, json: boolean | undefined): JsonFilter {
  if (!json) {
    throw new UsageError("--query selects from the JSON a command prints: add --json.", {
      hint: `For example: bulkcheck runs --json --query totals.charged_micros`,
    });
  }
  let tree: unknown;
  try {
    tree = compile(expression);
  } catch (error) {
    throw new UsageError(
      `--query ${JSON.stringify(expression)} is not a JMESPath expression: ${(error as Error).message.replace(/\.$/, "")}.`,
      {
        hint: SYNTAX_HINT,
      },
    );
  }
  const unknown = functionsCalled(tree).filter((name) => !FUNCTIONS.has(name));
  if (unknown.length > 0) {
    throw new UsageError(
      `--query ${JSON.stringify(expression)} calls ${unknown.map((name) => `${name}()`).join(", ")}, which JMESPath does not have.`,
      {
        hint: `Its functions: ${[...FUNCTIONS].join(", ")}. ${SYNTAX_HINT}`,
      },
    );
  }
  return {
    expression,
    select(value) {
      try {
        return search(value, expression);
      } catch (error) {
        // A function given a value of the wrong type (sum() of strings, length() of null).
        throw new UsageError(
          `--query ${JSON.stringify(expression)} failed on the output: ${(error as Error).message.replace(/\.$/, "")}.`,
          {
            hint: SYNTAX_HINT,
          },
        );
      }
    },
  };
}

/**
 * The names of the functions a parsed expression calls, anywhere in it: its nodes hold the
 * nodes under them in `children`, a key of a multi-select hash in `value`.
 */
function functionsCalled(node: unknown): string[] {
  if (typeof node !== "object" || node === null) return [];
  const { type, name, children, value } = node as { type?: unknown; name?: unknown; children?: unknown; value?: unknown };
  const own = type === "Function" && typeof name === "string" ? [name] : [];
  const below: unknown[] = [...(Array.isArray(children) ? (children as unknown[]) : []), ...(type === "KeyValuePair" ? [value] : [])];
  return [...own, ...below.flatMap(functionsCalled)];
}
