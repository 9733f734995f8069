/** Writes docs/schemas/*.schema.json from the record schemas (src/core/records.ts). Run: npm run schemas */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { recordJsonSchemaFiles } from "../src/core/record_json_schemas.js";

const dir = join(import.meta.dirname, "..", "docs", "schemas");
mkdirSync(dir, { recursive: true });
for (const [name, text] of Object.entries(recordJsonSchemaFiles())) {
  writeFileSync(join(dir, name), text);
  process.stdout.write(`wrote docs/schemas/${name}\n`);
}
