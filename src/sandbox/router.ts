import { API_PREFIX } from "../spec/products.js";
import { isWebhooksPath } from "./webhooks.js";

export type RouteName =
  "submit" | "check" | "balance" | "result" | "admin-state" | "admin-faults" | "admin-task-lines" | "webhooks" | "unknown";

export interface Route {
  name: RouteName;
  /** Methods the path accepts (405 otherwise). */
  methods: readonly string[];
  /** Task id segment of a check, or file name of a result download (not yet validated). */
  param?: string;
}

const TASKS_PATH = `${API_PREFIX}/bulk-tasks`;

/** Maps a path (no query string) to its route; `unknown` when nothing matches. */
export function matchRoute(path: string): Route {
  if (path === TASKS_PATH) return { name: "submit", methods: ["POST"] };
  if (path.startsWith(`${TASKS_PATH}/`)) {
    const param = path.slice(TASKS_PATH.length + 1);
    if (param !== "" && !param.includes("/")) return { name: "check", methods: ["GET"], param };
  }
  if (path === `${API_PREFIX}/balance`) return { name: "balance", methods: ["GET"] };
  if (path.startsWith("/results/")) {
    const param = path.slice("/results/".length);
    if (param !== "" && !param.includes("/")) return { name: "result", methods: ["GET", "HEAD"], param };
  }
  if (path === "/_sandbox/state") return { name: "admin-state", methods: ["GET"] };
  if (path === "/_sandbox/faults") return { name: "admin-faults", methods: ["POST"] };
  const lines = /^\/_sandbox\/tasks\/([^/]+)\/lines$/.exec(path);
  if (lines) return { name: "admin-task-lines", methods: ["GET"], param: lines[1]! };
  if (isWebhooksPath(path)) return { name: "webhooks", methods: ["GET", "POST"] };
  return { name: "unknown", methods: [] };
}
