import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // One PostgreSQL server for the whole run, for the store's tests (test/helpers/postgres.ts), and
    // one cache directory for the compile cache of the processes the tests spawn (test/helpers/cli.ts).
    globalSetup: ["test/helpers/postgres-global-setup.ts", "test/helpers/cache-global-setup.ts"],
    // The build (dist/, which the soak, the worker-thread and package tests load) runs as Node loads
    // it, as users get it, instead of through vite's transform: some 5 s less for the soak alone.
    server: { deps: { external: [/\/dist\//] } },
  },
});
