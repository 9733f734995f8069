/** scripts/build-test-image.sh takes its Debian mirror from the machine's apt sources, never from the repository. */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const SCRIPT = join(import.meta.dirname, "..", "scripts", "build-test-image.sh");
const dirs: string[] = [];

function aptDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "hb-apt-"));
  dirs.push(dir);
  mkdirSync(join(dir, "sources.list.d"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function printMirror(dir: string, env: Record<string, string> = {}) {
  return spawnSync("bash", [SCRIPT, "--print-mirror"], {
    env: { ...process.env, HERMES_APT_DIR: dir, HERMES_DEBIAN_MIRROR: "", ...env },
    encoding: "utf8",
  });
}

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("build-test-image.sh --print-mirror", () => {
  it("reads a deb822 .sources file, skipping the security stanza and comments", () => {
    const dir = aptDir({
      "sources.list.d/debian.sources": [
        "Types: deb",
        "URIs: http://security.mirror.invalid/debian-security",
        "Suites: bookworm-security",
        "",
        "Types: deb-src deb",
        "# URIs: http://commented.invalid/debian",
        "URIs: http://main.mirror.invalid/debian",
        "Suites: bookworm bookworm-updates",
        "Components: main",
      ].join("\n"),
    });
    expect(
      execFileSync("bash", [SCRIPT, "--print-mirror"], {
        env: { ...process.env, HERMES_APT_DIR: dir, HERMES_DEBIAN_MIRROR: "" },
        encoding: "utf8",
      }).trim(),
    ).toBe("http://main.mirror.invalid/debian");
  });

  it("reads one-line entries with [options] from sources.list before the .sources files", () => {
    const dir = aptDir({
      "sources.list":
        "# deb http://old.invalid/debian bookworm main\ndeb http://sec.invalid/debian-security bookworm-security main\ndeb [arch=amd64 signed-by=/k.gpg] http://one-line.invalid/debian bookworm main\n",
      "sources.list.d/other.sources": "Types: deb\nURIs: http://other.invalid/debian\nSuites: bookworm\n",
    });
    expect(printMirror(dir).stdout.trim()).toBe("http://one-line.invalid/debian");
  });

  it("fails with one line naming the override when no source serves the suite", () => {
    const dir = aptDir({
      "sources.list.d/node.sources": "Types: deb\nURIs: http://node.invalid/node\nSuites: nodistro\n",
    });
    const r = printMirror(dir);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/no apt source for bookworm .*HERMES_DEBIAN_MIRROR/);
    expect(printMirror(dir, { HERMES_DEBIAN_MIRROR: "http://given.invalid/debian" }).stdout.trim()).toBe(
      "http://given.invalid/debian",
    );
  });
});
