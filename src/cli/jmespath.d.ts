// The two functions bulkcheck uses of the jmespath package (0.16), which ships no types.
declare module "jmespath" {
  /** A node of a parsed expression: `type` names it ("Field", "Function", …); functions carry `name`. */
  export interface JmespathNode {
    type: string;
    name?: string;
    children?: unknown[];
  }
  /** Parses an expression; throws an Error named LexerError or ParserError. */
  export function compile(expression: string): JmespathNode;
  /** Evaluates an expression against a JSON value; a function given the wrong types throws. */
  export function search(data: unknown, expression: string): unknown;
}
