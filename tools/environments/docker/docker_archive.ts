/**
 * Reading a file through Docker's archive API (GET /containers/{id}/archive): works in any image, with or without
 * a shell, even before the container starts (the image's /etc/passwd from a never-started probe). The engine reads
 * the container's root filesystem and volumes, not tmpfs mounts inside a running container.
 */
import { posix } from "node:path";
import type { Readable } from "node:stream";
import type Docker from "dockerode";
import tar from "tar-stream";
import type { ShellWriteErrorCode } from "../base.js";
import { dockerErrorMessage, statusCodeOf } from "./docker_client.js";

export class ContainerFileError extends Error {
  constructor(
    message: string,
    readonly code: "ENOENT" | "EIO" | ShellWriteErrorCode,
  ) {
    super(message);
    this.name = "ContainerFileError";
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
