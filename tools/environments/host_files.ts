/**
 * A task's files read and written from the host (`--env host`, and Singularity's bound folder): opened without
 * blocking, and only a regular file is read or written. A FIFO the agent made would otherwise block the open until
 * its other end opens, in one of the process's four libuv threads, for good: four such opens stop every file
 * operation of the run (its results included). A device such as /dev/zero would be read without end.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { MAX_FILE_READ_BYTES } from "./base.js";

/** `followLinks: false`: a link as the last part of the path is refused (the caller resolved the path itself). */
export interface HostFileOptions {
  followLinks: boolean;
}

function openFlags(flags: number, opts: HostFileOptions): number {
  return flags | constants.O_NONBLOCK | (opts.followLinks ? 0 : constants.O_NOFOLLOW);
}

function notRegular(path: string): Error {
  return Object.assign(new Error(`${path}: not a regular file`), { code: "EINVAL" });
}

export async function readRegularFile(path: string, opts: HostFileOptions): Promise<Buffer> {
  const fh = await open(path, openFlags(constants.O_RDONLY, opts));
  try {
    const st = await fh.stat();
    if (st.isDirectory())
      throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read`), { code: "EISDIR" });
    if (!st.isFile()) throw notRegular(path);
    if (st.size > MAX_FILE_READ_BYTES)
      throw Object.assign(new Error(`${path}: File is larger than ${MAX_FILE_READ_BYTES} bytes`), { code: "EFBIG" });
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

export async function writeRegularFile(path: string, data: string | Buffer, opts: HostFileOptions): Promise<void> {
  const fh = await open(path, openFlags(constants.O_WRONLY | constants.O_CREAT, opts), 0o666);
  try {
    if (!(await fh.stat()).isFile()) throw notRegular(path);
    await fh.truncate(0);
    await fh.writeFile(data);
  } finally {
    await fh.close();
  }
}
