/**
 * File transfer through Docker's archive API (GET/PUT/HEAD /containers/{id}/archive): works in any image,
 * with or without python, even before the container starts. The engine reads and writes the container's
 * root filesystem and volumes, not tmpfs mounts inside a running container: paths on tmpfs go through
 * `cat` in an exec instead (see DockerEnvironment).
 */
import { posix } from "node:path";
import type { Readable } from "node:stream";
import type Docker from "dockerode";
import tar from "tar-stream";
import type { ShellWriteErrorCode } from "../base.js";
import { dockerErrorMessage, statusCodeOf } from "./docker_client.js";

/** What the engine reports about a path (Go's os.FileMode in `mode`). */
export interface PathStat {
  name: string;
  size: number;
  mode: number;
  linkTarget: string;
}

const GO_MODE_DIR = 2 ** 31;
const GO_MODE_SYMLINK = 2 ** 27;

function hasBit(mode: number, bit: number): boolean {
  return Math.floor(mode / bit) % 2 === 1;
}

export function isDirStat(st: PathStat): boolean {
  return hasBit(st.mode, GO_MODE_DIR);
}

export function isSymlinkStat(st: PathStat): boolean {
  return hasBit(st.mode, GO_MODE_SYMLINK);
}

export class ContainerFileError extends Error {
  constructor(
    message: string,
    readonly code: "ENOENT" | "EIO" | ShellWriteErrorCode,
  ) {
    super(message);
    this.name = "ContainerFileError";
  }
}

/** The engine's stat of a path, or undefined when it does not exist. */
export async function statPath(container: Docker.Container, path: string): Promise<PathStat | undefined> {
  try {
    const res = (await container.infoArchive({ path })) as {
      headers?: Record<string, string | undefined>;
      resume?: () => void;
    };
    res.resume?.();
    const header = res.headers?.["x-docker-container-path-stat"];
    if (!header) return undefined;
    return JSON.parse(Buffer.from(header, "base64").toString("utf8")) as PathStat;
  } catch (err) {
    if (statusCodeOf(err) === 404) return undefined;
    throw new ContainerFileError(`stat ${path}: ${dockerErrorMessage(err)}`, "EIO");
  }
}

function resolveLink(path: string, target: string): string {
  return posix.isAbsolute(target) ? posix.normalize(target) : posix.normalize(posix.join(posix.dirname(path), target));
}

async function firstEntry(archive: Readable): Promise<{ header: tar.Header; data: Buffer }> {
  const extract = tar.extract();
  archive.pipe(extract);
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    const result = { header: entry.header, data: Buffer.concat(chunks) };
    archive.unpipe(extract);
    (archive as Readable & { destroy?: () => void }).destroy?.();
    return result;
  }
  throw new ContainerFileError("empty archive from the engine", "EIO");
}

export async function readViaArchive(container: Docker.Container, path: string, depth = 0): Promise<Buffer> {
  let archive: Readable;
  try {
    archive = (await container.getArchive({ path })) as Readable;
  } catch (err) {
    if (statusCodeOf(err) === 404) throw new ContainerFileError(`${path}: No such file or directory`, "ENOENT");
    throw new ContainerFileError(`read ${path}: ${dockerErrorMessage(err)}`, "EIO");
  }
  const { header, data } = await firstEntry(archive);
  if (header.type === "directory") throw new ContainerFileError(`${path}: Is a directory`, "EISDIR");
  if (header.type === "symlink" && header.linkname) {
    if (depth >= 8) throw new ContainerFileError(`${path}: Too many levels of symbolic links`, "EIO");
    return readViaArchive(container, resolveLink(path, header.linkname), depth + 1);
  }
  return data;
}

function packToBuffer(build: (pack: tar.Pack) => void): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pack.on("data", (c: unknown) => chunks.push(c as Buffer));
    pack.on("end", () => resolve(Buffer.concat(chunks)));
    pack.on("error", reject);
  });
  build(pack);
  pack.finalize();
  return done;
}

/**
 * Writes a file, creating missing parent directories (owned by uid/gid, like the file). An existing file
 * keeps its permission bits; a symlink is written through.
 */
export async function writeViaArchive(
  container: Docker.Container,
  path: string,
  data: Buffer,
  owner: { uid: number; gid: number },
  depth = 0,
): Promise<void> {
  const existing = await statPath(container, path);
  if (existing && isSymlinkStat(existing) && existing.linkTarget) {
    if (depth >= 8) throw new ContainerFileError(`${path}: Too many levels of symbolic links`, "EIO");
    return writeViaArchive(container, resolveLink(path, existing.linkTarget), data, owner, depth + 1);
  }
  if (existing && isDirStat(existing)) throw new ContainerFileError(`${path}: Is a directory`, "EISDIR");
  const mode = existing ? existing.mode % 0o1000 : 0o644;

  const { base, missing } = await missingAncestors(container, posix.dirname(path));
  const body = await packToBuffer((pack) => {
    const rel = addDirEntries(pack, missing, owner);
    const name = rel ? `${rel}/${posix.basename(path)}` : posix.basename(path);
    pack.entry({ name, type: "file", mode, uid: owner.uid, gid: owner.gid, size: data.length }, data);
  });
  try {
    await container.putArchive(body, { path: base });
  } catch (err) {
    throw new ContainerFileError(`write ${path}: ${dockerErrorMessage(err)}`, "EIO");
  }
}

/** The deepest existing ancestor of dir (where an archive is extracted) and the directories missing below it. */
async function missingAncestors(
  container: Docker.Container,
  dir: string,
): Promise<{ base: string; missing: string[] }> {
  const missing: string[] = [];
  let base = dir;
  for (;;) {
    const st = await statPath(container, base);
    if (st) {
      if (!isDirStat(st) && !isSymlinkStat(st)) throw new ContainerFileError(`${base}: Not a directory`, "EIO");
      return { base, missing };
    }
    if (base === "/") return { base, missing };
    missing.unshift(posix.basename(base));
    base = posix.dirname(base);
  }
}

function addDirEntries(pack: tar.Pack, missing: string[], owner: { uid: number; gid: number }): string {
  let rel = "";
  for (const dir of missing) {
    rel = rel ? `${rel}/${dir}` : dir;
    pack.entry({ name: `${rel}/`, type: "directory", mode: 0o755, uid: owner.uid, gid: owner.gid });
  }
  return rel;
}

/** `mkdir -p` through the archive API; new directories are owned by uid/gid. */
export async function mkdirViaArchive(
  container: Docker.Container,
  dir: string,
  owner: { uid: number; gid: number },
): Promise<void> {
  const { base, missing } = await missingAncestors(container, dir);
  if (missing.length === 0) return;
  const body = await packToBuffer((pack) => {
    addDirEntries(pack, missing, owner);
  });
  try {
    await container.putArchive(body, { path: base });
  } catch (err) {
    throw new ContainerFileError(`mkdir ${dir}: ${dockerErrorMessage(err)}`, "EIO");
  }
}
