/**
 * The user's permanent command allowlist: `command_allowlist` in ~/.hermes-batch/config.yaml
 * (HERMES_BATCH_CONFIG_DIR overrides the folder). Entries are pattern keys.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { isMap, isSeq, parseDocument } from "yaml";
import * as z from "zod";
import { UserError } from "../../src/core/errors.js";
import { HERMES_KEYS } from "./next/rules/hermes_keys.js";

export function userConfigPath(): string {
  return join(process.env.HERMES_BATCH_CONFIG_DIR || join(homedir(), ".hermes-batch"), "config.yaml");
}

const UserConfigSchema = z.looseObject({
  command_allowlist: z
    .array(z.string({ error: "must be a pattern key (a string)" }).min(1, "an entry is empty"), {
      error: "must be a list of pattern keys (strings)",
    })
    .nullish(),
});

const readIfExists = (path: string): Promise<string | undefined> =>
  readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });

function parseConfig(text: string, path: string) {
  const doc = parseDocument(text);
  if (doc.errors.length)
    throw new UserError(`${path}: invalid YAML: ${doc.errors[0]!.message.split("\n")[0]!.replace(/:$/, "")}`);
  const root = doc.contents;
  if (root !== null && !isMap(root)) throw new UserError(`${path}: the top level must be a mapping`);
  return doc;
}

/**
 * The pattern keys in `command_allowlist`; [] when the file or the key is missing. A file that cannot
 * be read or parsed, or has the wrong shape, is a UserError naming the file and the reason.
 */
export async function loadUserAllowlist(path: string = userConfigPath()): Promise<string[]> {
  const text = await readIfExists(path).catch((err: NodeJS.ErrnoException) => {
    throw new UserError(`${path}: cannot read the user config (${err.code ?? String(err)})`);
  });
  if (text === undefined) return [];
  const doc = parseConfig(text, path);
  const result = UserConfigSchema.safeParse(doc.toJS() ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new UserError(`${path}: ${issue.path.map(String).join(".") || "config"}: ${issue.message}`);
  }
  return result.data.command_allowlist ?? [];
}

/**
 * Adds a pattern key to `command_allowlist`, keeping the rest of the file (other keys, comments).
 * Written to a temporary file and renamed, so a crash never leaves half a config.
 */
export async function appendToAllowlist(key: string, path: string = userConfigPath()): Promise<void> {
  if (!key) throw new Error("appendToAllowlist needs a pattern key");
  const text = (await readIfExists(path)) ?? "";
  const doc = parseConfig(text, path);
  // A missing or empty (`command_allowlist:`) list is a new one.
  const list = doc.get("command_allowlist") ?? doc.createNode([]);
  if (!isSeq(list)) throw new UserError(`${path}: command_allowlist: must be a list of pattern keys (strings)`);
  if ((list.toJSON() as unknown[]).map(String).includes(key)) return;
  list.add(doc.createNode(key));
  doc.set("command_allowlist", list);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, doc.toString(), "utf8");
  await rename(tmp, path);
}

/** Every name an allowlist entry may use for a class: its key, its description, its Hermes keys. */
export function classNames(m: { key: string; description: string }): string[] {
  return [m.key, m.description, ...(HERMES_KEYS[m.key] ?? [])];
}
