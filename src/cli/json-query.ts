import { compile, search } from "jmespath";
import { shortened } from "../ansi.js";
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
 * The longest expression taken, and how deeply its parts may nest (each node under another in
 * the parsed expression: a `.`, `|`, `!`, operator, bracket, brace or function call is a
 * level). The jmespath package parses and evaluates recursively, so a few thousand levels
 * overflow the stack; no question about one JSON object needs more than a few dozen.
 */
export const MAX_QUERY_CHARS = 1000;
export const MAX_QUERY_DEPTH = 100;

/** How much of an expression a message quotes: enough to recognise it, never a page of it. */
const QUOTED_CHARS = 60;

/** The expression as a message quotes it (see QUOTED_CHARS). */
function quoted(expression: string): string {
  return JSON.stringify(shortened(expression, QUOTED_CHARS));
}

/** What the jmespath package says of an expression, bounded: it may quote the expression back. */
function libraryMessage(error: unknown): string {
  return shortened(error instanceof Error ? error.message : String(error), 200).replace(/\.$/, "");
}

const LIMITS_HINT = `bulkcheck takes an expression of at most ${MAX_QUERY_CHARS.toLocaleString("en-US")} characters, nested at most ${MAX_QUERY_DEPTH} levels deep. ${SYNTAX_HINT}`;

/**
 * `--query EXPR`: the JMESPath expression every JSON object a command prints goes through
 * (each line of the commands that print several, as gh's --jq does). The jmespath package
 * (58 KB, no dependencies) is loaded with this module, which services.ts imports only when
 * the flag is given: see docs/performance.md for why JMESPath rather than jq compiled to
 * WebAssembly.
 * @throws UsageError (exit 2) without --json, or for an expression that is longer or nests
 *   deeper than bulkcheck takes (MAX_QUERY_CHARS, MAX_QUERY_DEPTH), does not parse or calls
 *   a function JMESPath does not have: before the command does anything. Messages quote at
 *   most QUOTED_CHARS of it.
 */
export function jsonQuery(expression: string, json: boolean | undefined): JsonFilter {
  if (!json) {
    throw new UsageError("--query selects from the JSON a command prints: add --json.", {
      hint: `For example: bulkcheck runs --json --query totals.charged_micros`,
    });
  }
  if (expression.length > MAX_QUERY_CHARS) {
    throw new UsageError(`--query ${quoted(expression)} is ${expression.length.toLocaleString("en-US")} characters long.`, {
      hint: LIMITS_HINT,
    });
  }
  let tree: unknown;
  try {
    tree = compile(expression);
  } catch (error) {
    if (error instanceof RangeError) throw tooDeep(expression);
    throw new UsageError(`--query ${quoted(expression)} is not a JMESPath expression: ${libraryMessage(error)}.`, {
      hint: SYNTAX_HINT,
    });
  }
  if (depthOf(tree) > MAX_QUERY_DEPTH) throw tooDeep(expression);
  const unknown = functionsCalled(tree).filter((name) => !FUNCTIONS.has(name));
  if (unknown.length > 0) {
    throw new UsageError(
      `--query ${quoted(expression)} calls ${unknown.map((name) => `${name}()`).join(", ")}, which JMESPath does not have.`,
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
        throw new UsageError(`--query ${quoted(expression)} failed on the output: ${libraryMessage(error)}.`, { hint: SYNTAX_HINT });
      }
    },
  };
}

function tooDeep(expression: string): UsageError {
  return new UsageError(`--query ${quoted(expression)} nests more than ${MAX_QUERY_DEPTH} levels deep.`, { hint: LIMITS_HINT });
}

/** The parts of a parsed expression's node: its nodes hold the nodes under them in `children`, a key of a multi-select hash in `value`. */
function partsOf(node: object): unknown[] {
  const { type, children, value } = node as { type?: unknown; children?: unknown; value?: unknown };
  return [...(Array.isArray(children) ? (children as unknown[]) : []), ...(type === "KeyValuePair" ? [value] : [])];
}

/** How many levels a parsed expression nests, counted without recursion (the tree may be deeper than the stack). */
function depthOf(tree: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[tree, 1]];
  while (pending.length > 0) {
    const [node, level] = pending.pop()!;
    if (typeof node !== "object" || node === null) continue;
    deepest = Math.max(deepest, level);
    for (const part of partsOf(node)) pending.push([part, level + 1]);
  }
  return deepest;
}

/**
 * The names of the functions a parsed expression calls, anywhere in it: its nodes hold the
 * nodes under them in `children`, a key of a multi-select hash in `value`.
 */
function functionsCalled(node: unknown): string[] {
  if (typeof node !== "object" || node === null) return [];
  const { type, name } = node as { type?: unknown; name?: unknown };
  const own = type === "Function" && typeof name === "string" ? [name] : [];
  return [...own, ...partsOf(node).flatMap(functionsCalled)];
}
