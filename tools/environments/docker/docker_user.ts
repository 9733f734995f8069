/** The user a Docker sandbox's commands run as: the image's USER, its first regular user, root, or as asked. */
import { withEngineRetry } from "./docker_retry.js";
import {
  LABEL_ROLE,
  LABEL_RUN,
  LABEL_TASK,
  dockerClient,
  removeContainerById,
  type ImageInfo,
} from "./docker_client.js";
import { ContainerFileError, readViaArchive } from "./docker_archive.js";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export interface RunUser {
  /** Passed as Config.User and exec User; undefined = the image default (root). */
  user: string | undefined;
  uid: number;
  gid: number;
}

function parsePasswd(text: string): Array<{ name: string; uid: number; gid: number; shell: string }> {
  return text
    .split("\n")
    .map((line) => line.split(":"))
    .filter((f) => f.length >= 7 && /^\d+$/.test(f[2]!) && /^\d+$/.test(f[3]!))
    .map((f) => ({ name: f[0]!, uid: Number(f[2]), gid: Number(f[3]), shell: f[6]! }));
}

type PasswdEntry = ReturnType<typeof parsePasswd>[number];

const passwdCache = new Map<string, Promise<PasswdEntry[]>>();

/**
 * Where an image's /etc/passwd entries are kept between processes, by image id: the id is the digest of the
 * image's config, which names its layers by their content, so the file read from an image of that id never changes.
 * Undefined for an id that is not such a digest.
 */
function passwdCacheFile(imageId: string): string | undefined {
  const m = /^sha256:([0-9a-f]{64})$/.exec(imageId);
  if (!m) return undefined;
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(base, "hermes-batch", "image-passwd", `${m[1]}.json`);
}

function readCachedPasswd(file: string): PasswdEntry[] | undefined {
  try {
    const data = JSON.parse(readFileSync(file, "utf8")) as unknown;
    if (!Array.isArray(data)) return undefined;
    const ok = data.every(
      (u: unknown) =>
        typeof u === "object" &&
        u !== null &&
        typeof (u as PasswdEntry).name === "string" &&
        Number.isInteger((u as PasswdEntry).uid) &&
        Number.isInteger((u as PasswdEntry).gid) &&
        typeof (u as PasswdEntry).shell === "string",
    );
    return ok ? (data as PasswdEntry[]) : undefined;
  } catch {
    return undefined;
  }
}

function writeCachedPasswd(file: string, entries: PasswdEntry[]): void {
  try {
    mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(entries), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // A cache only: the next process reads the image again.
  }
}

/** The /etc/passwd entries of an image, read from a never-started probe container; `definite` unless the read failed. */
async function probeImagePasswd(
  imageName: string,
  runName: string,
): Promise<{ entries: PasswdEntry[]; definite: boolean }> {
  const probe = await withEngineRetry(() =>
    dockerClient().createContainer({
      Image: imageName,
      Entrypoint: ["true"],
      Cmd: [],
      Labels: { [LABEL_RUN]: runName, [LABEL_TASK]: "", [LABEL_ROLE]: "probe" },
      HostConfig: { NetworkMode: "none" },
    }),
  );
  try {
    const text = await readViaArchive(probe, "/etc/passwd").then(
      (b) => ({ text: b.toString("utf8"), definite: true }),
      (err: unknown) => ({ text: "", definite: err instanceof ContainerFileError && err.code === "ENOENT" }),
    );
    return { entries: parsePasswd(text.text), definite: text.definite };
  } finally {
    await removeContainerById(probe.id).catch(() => undefined);
  }
}

/**
 * The /etc/passwd entries of an image: once per image per process, and from the cache of earlier processes when
 * one read it (a probe container costs the engine a create, a `docker-tar` re-execution and a remove).
 */
function readImagePasswd(imageName: string, image: ImageInfo, runName: string): Promise<PasswdEntry[]> {
  const cached = passwdCache.get(image.id);
  if (cached) return cached;
  const pending = (async () => {
    const file = passwdCacheFile(image.id);
    const fromDisk = file ? readCachedPasswd(file) : undefined;
    if (fromDisk) return fromDisk;
    const { entries, definite } = await probeImagePasswd(imageName, runName);
    if (file && definite) writeCachedPasswd(file, entries);
    return entries;
  })();
  passwdCache.set(image.id, pending);
  pending.catch(() => passwdCache.delete(image.id));
  return pending;
}

/** The image's first regular user, else root. */
async function detectImageUser(imageName: string, image: ImageInfo, runName: string): Promise<RunUser> {
  const regular = (await readImagePasswd(imageName, image, runName)).find(
    (u) => u.uid >= 1000 && u.uid < 65534 && !/(nologin|false)$/.test(u.shell),
  );
  return regular
    ? { user: `${regular.uid}:${regular.gid}`, uid: regular.uid, gid: regular.gid }
    : { user: undefined, uid: 0, gid: 0 };
}

export async function resolveRunUser(
  setting: string,
  imageName: string,
  image: ImageInfo,
  runName: string,
): Promise<RunUser> {
  if (setting === "root") return { user: "0:0", uid: 0, gid: 0 };
  if (setting === "auto") {
    if (image.user && image.user !== "root" && image.user !== "0" && !image.user.startsWith("0:")) {
      const m = /^(\d+)(?::(\d+))?$/.exec(image.user);
      return { user: image.user, uid: m ? Number(m[1]) : 1000, gid: m?.[2] ? Number(m[2]) : m ? Number(m[1]) : 1000 };
    }
    return detectImageUser(imageName, image, runName);
  }
  const m = /^(\d+)(?::(\d+))?$/.exec(setting);
  if (m) return { user: setting, uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
  // A user name: the engine resolves it; ownership of new files follows the passwd entry if we find it.
  const passwd = (await readImagePasswd(imageName, image, runName)).find((u) => u.name === setting);
  return { user: setting, uid: passwd?.uid ?? 0, gid: passwd?.gid ?? 0 };
}
