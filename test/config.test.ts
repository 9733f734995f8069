import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultApiKey, lineOfKey, publicConfig, resolveRunConfig } from "../src/config/run_config.js";
import { createRedactor, secretValues } from "../src/store/redact.js";
import { UserError } from "../src/core/errors.js";
import { tempDir } from "./helpers/cli.js";

describe("run configuration", () => {
  it("merges the YAML file and the flags, flags winning", () => {
    const dir = tempDir();
    const path = join(dir, "run.yaml");
    writeFileSync(path, "dataset: d.jsonl\nmax_turns: 4\nseed: 9\n");
    const c = resolveRunConfig({ max_turns: 7 }, path);
    expect(c.max_turns).toBe(7);
    expect(c.seed).toBe(9);
    expect(c.concurrency).toBe(32);
  });

  it("names the flag, or the file and line, of a bad value", () => {
    const dir = tempDir();
    const path = join(dir, "run.yaml");
    writeFileSync(path, "dataset: d.jsonl\n\nworkers: none\n");
    expect(() => resolveRunConfig({}, path)).toThrow(new RegExp(`${path}:3: 'workers'`));
    expect(() => resolveRunConfig({ dataset: "d", env: "podman" })).toThrow(
      /^--env must be one of local\|docker\|singularity\|host, got 'podman'$/,
    );
    expect(() => resolveRunConfig({ dataset: "d", env: "podman" })).toThrow(UserError);
    expect(lineOfKey("a: 1\n# c\nb: 2\n", "b")).toBe(3);
  });

  it("picks the environment key that belongs to the endpoint", () => {
    const env = { OPENAI_API_KEY: "oa", OPENROUTER_API_KEY: "or" };
    expect(defaultApiKey(undefined, env)).toBe("or");
    expect(defaultApiKey("https://openrouter.ai/api/v1", env)).toBe("or");
    expect(defaultApiKey("http://127.0.0.1:8000/v1", env)).toBe("oa");
    expect(defaultApiKey("http://127.0.0.1:8000/v1", { OPENROUTER_API_KEY: "or" })).toBe("or");
  });

  it("keeps secrets and the ephemeral prompt out of run.yaml", () => {
    const c = resolveRunConfig({ dataset: "d", api_key: "sk-1234567890", ephemeral_system_prompt: "hidden" });
    const pub = JSON.stringify(publicConfig(c));
    expect(pub).not.toContain("sk-1234567890");
    expect(pub).not.toContain("hidden");
  });
});

describe("redaction", () => {
  it("removes every secret value, also in its JSON-escaped form", () => {
    const c = resolveRunConfig({ dataset: "d", api_key: 'sk-live-abc"def' });
    const redact = createRedactor(secretValues(c, { MY_TOKEN: "tok-0123456789", SHORT_TOKEN: "x", PATH: "/usr/bin" }));
    const line = JSON.stringify({ a: 'key sk-live-abc"def here', b: "tok-0123456789", c: "/usr/bin" });
    const out = redact(line);
    expect(out).not.toContain("tok-0123456789");
    expect(out).not.toContain('sk-live-abc\\"def');
    expect(JSON.parse(out)).toEqual({ a: "key <redacted> here", b: "<redacted>", c: "/usr/bin" });
  });
});
