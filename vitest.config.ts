import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // One PostgreSQL server for the whole run, for the store's tests (test/helpers/postgres.ts).
    globalSetup: ["test/helpers/postgres-global-setup.ts"],
  },
});
