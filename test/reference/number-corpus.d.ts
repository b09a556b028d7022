// Types of test/reference/number-corpus.js for the TypeScript tests.
export declare const CORPUS_COUNTRIES: readonly string[];
export declare function corpusCells(country: string, index: number): string[];
export declare function corpusCellsWithoutCountry(): string[];
