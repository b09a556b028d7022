// The API client alone uploading one file, for upload-bench.js's streaming check: run
// as a child (so its peak RSS is the client's) with the compiled client, the server's
// port and the file; prints one JSON object. With "idle" it loads the client and
// exits without uploading: the floor the upload's own memory is measured against.
//   node bench/upload-client.js DIST PORT FILE|idle
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [dist, port, file] = process.argv.slice(2);
const { createClient } = await import(pathToFileURL(join(dist, "api", "index.js")).href);
const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "sk_bench_upload_client" });
try {
  if (file !== "idle")
    await client.submitTask({ serviceType: "number_validation_batch", country: "US", file, idempotencyKey: "bench-upload" });
} finally {
  await client.close();
}
console.log(JSON.stringify({ uploaded: file !== "idle" }));
