// A server in a process of its own for the upload benchmark's client-only case
// (upload-bench.js): it hashes the file part as it arrives and answers with the task
// it was given, so that the measured process holds only the client (a server in the
// same process held what it had received but not yet read, tens of MB under load).
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import busboy from "busboy";

process.once("message", ({ task }) => {
  const server = createServer((req, res) => {
    const hash = createHash("sha256");
    let size = 0;
    const parser = busboy({ headers: req.headers });
    parser.on("file", (_name, file) =>
      file.on("data", (chunk) => {
        hash.update(chunk);
        size += chunk.length;
      }),
    );
    parser.on("close", () => {
      process.send({ size, sha256: hash.digest("hex") });
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ code: 0, msg: "success", data: task }));
    });
    req.pipe(parser);
  });
  server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
});
