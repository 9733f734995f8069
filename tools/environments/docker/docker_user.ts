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
import { readViaArchive } from "./docker_archive.js";

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

const imageUserCache = new Map<string, Promise<RunUser>>();

/** The /etc/passwd entries of an image, read from a never-started probe container. */
async function readImagePasswd(imageName: string, runName: string): Promise<ReturnType<typeof parsePasswd>> {
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
    return parsePasswd((await readViaArchive(probe, "/etc/passwd").catch(() => Buffer.alloc(0))).toString("utf8"));
  } finally {
    await removeContainerById(probe.id).catch(() => undefined);
  }
}

/** The image's first regular user (once per image per process), else root. */
async function detectImageUser(imageName: string, image: ImageInfo, runName: string): Promise<RunUser> {
  const cached = imageUserCache.get(image.id);
  if (cached) return cached;
  const pending = (async (): Promise<RunUser> => {
    const regular = (await readImagePasswd(imageName, runName)).find(
      (u) => u.uid >= 1000 && u.uid < 65534 && !/(nologin|false)$/.test(u.shell),
    );
    return regular
      ? { user: `${regular.uid}:${regular.gid}`, uid: regular.uid, gid: regular.gid }
      : { user: undefined, uid: 0, gid: 0 };
  })();
  imageUserCache.set(image.id, pending);
  pending.catch(() => imageUserCache.delete(image.id));
  return pending;
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
  const passwd = await detectPasswdEntry(imageName, runName, setting);
  return { user: setting, uid: passwd?.uid ?? 0, gid: passwd?.gid ?? 0 };
}

async function detectPasswdEntry(imageName: string, runName: string, name: string) {
  return (await readImagePasswd(imageName, runName)).find((u) => u.name === name);
}
