// Types of scripts/folder-cycles.mjs for the test suite (test/scripts/folder-cycles.test.ts).

/** Per folder (or file directly in the root), the nodes it imports, each with one import that makes the edge. */
export declare function folderGraph(root: string): Map<string, Map<string, string>>;
/** The folder cycles of the graph: each a sorted list of the folders importing each other. */
export declare function folderCycles(edges: Map<string, Map<string, string>>): string[][];
/** One paragraph per cycle, naming an import behind each of its edges. */
export declare function describeCycles(edges: Map<string, Map<string, string>>, cycles: string[][]): string[];
/** The layers of src/, top first: a folder imports only folders of the layers after its own. */
export declare const LAYERS: string[][];
/** The edges that go up `layers` (or across one), one line each. */
export declare function layerViolations(edges: Map<string, Map<string, string>>, layers?: string[][]): string[];
