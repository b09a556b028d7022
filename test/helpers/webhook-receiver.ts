import type { IncomingHttpHeaders } from "node:http";
import { startServer } from "../api/scripted-server.js";

/** One request a receiver got: its headers (names in lower case) and its body as it arrived. */
export interface ReceivedDelivery {
  headers: Record<string, string>;
  body: string;
}

export interface Receiver {
  /** Where to --notify: a path of its own, as a real receiver has. */
  url: string;
  deliveries: ReceivedDelivery[];
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1: records every request, and answers the status `answer`
 * gives for it (by its 1-based number), 200 by default; null never answers (the request
 * hangs until the sender gives up or the receiver closes).
 */
export async function startReceiver(answer: (delivery: ReceivedDelivery, n: number) => number | null = () => 200): Promise<Receiver> {
  const deliveries: ReceivedDelivery[] = [];
  const server = await startServer(async (req, res, n) => {
    let body = "";
    for await (const chunk of req) body += String(chunk);
    const delivery = { headers: flat(req.headers), body };
    deliveries.push(delivery);
    const status = answer(delivery, n);
    if (status === null) return;
    res.statusCode = status;
    res.end();
  });
  return { url: `${server.origin}/hooks/bulkcheck`, deliveries, close: () => server.close() };
}

function flat(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : String(value)]),
  );
}
