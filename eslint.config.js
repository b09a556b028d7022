// ESLint: the recommended JavaScript rules and typescript-eslint's type-checked ones. Formatting
// is Prettier's job (`npm run format`), so there are no stylistic rules here.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "bench/data/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
      // Rethrowing what a catch caught is how errors travel; it is `unknown` by the language's rules.
      "@typescript-eslint/only-throw-error": ["error", { allowThrowingUnknown: true }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    // Tests fake async interfaces with plain functions and read JSON they just wrote.
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
    },
  },
  {
    // Scripts, benchmarks and the bin are plain JavaScript: no type information to check against.
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    extends: [tseslint.configs.disableTypeChecked],
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
