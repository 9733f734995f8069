/** The hermes-batch package version, read from its package.json (three folders up from dist/src/core, two from src/core). */
import { readFileSync } from "node:fs";

let cached: string | undefined;

export function packageVersion(): string {
  if (cached !== undefined) return cached;
  for (const rel of ["../../../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as { name?: string; version: string };
      if (pkg.name === "hermes-batch") return (cached = pkg.version);
    } catch {
      // try the next location
    }
  }
  return (cached = "unknown");
}
