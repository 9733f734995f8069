/**
 * Operations effects that no rule of their own judged (judge.ts calls `opsEffects` for every simple command):
 * infrastructure applied without review, node drains, deletes fed in bulk through xargs, remote objects emptied,
 * restores that drop a remote database, key deletes and auth changes on remote stores, process managers stopped
 * wholesale, release tags deleted on the remote, root tokens, SOCKS tunnels, ARP entries; system services started
 * or restarted through their init scripts; packages removed by the package managers of other systems, the
 * Python/Node tooling itself removed, and builds installed into system directories.
 */
import type { JudgedArg, Producer } from "./judge.js";
import { secretIn } from "./exfil.js";

const LOCAL = /^(?:localhost|[\w.-]+\.localhost|127(?:\.\d+){3}|0\.0\.0\.0|\[?::1\]?|::1|host\.docker\.internal)$/i;

export interface OpsContext {
  name: string;
  args: JudgedArg[];
  producer?: Producer | null;
  viaXargs?: boolean;
  privileged?: boolean;
  remote?: boolean;
  created: Set<string>;
  /** Assignments placed before the command (`DOCKER_HOST=tcp://… docker rm`). */
  env?: { name: string; value: string }[];
  /** A relative path or one under the task's working directory. */
  inside(path: string): boolean;
}

const words = (t: string[]) => t.filter((x) => !x.startsWith("-"));
function value(t: string[], ...opts: string[]): string | undefined {
  for (let k = 0; k < t.length; k++) {
    for (const o of opts) {
      if (t[k] === o) return t[k + 1];
      if (t[k]!.startsWith(o + "=")) return t[k]!.slice(o.length + 1);
      if (/^-[a-zA-Z]$/.test(o) && t[k]!.startsWith(o) && t[k]!.length > 2) return t[k]!.slice(2);
    }
  }
  return undefined;
}
const hostOfUri = (u: string) => /^[a-z][\w+.-]*:\/\/(?:[^@/\s]*@)?(\[[^\]]+\]|[^:/\s?#,]+)/i.exec(u)?.[1] ?? null;

// Package managers of other systems and their remove verbs (apt, dnf, yum, pacman, apk, snap, rpm, zypper are judged in judge.ts).
const REMOVERS: Record<string, RegExp> = {
  brew: /^(?:uninstall|remove|rm)$/,
  port: /^(?:uninstall)$/,
  flatpak: /^(?:uninstall|remove)$/,
  opkg: /^(?:remove)$/,
  winget: /^(?:uninstall|remove|rm)$/,
  choco: /^(?:uninstall)$/,
  scoop: /^(?:uninstall)$/,
  pkg: /^(?:delete|remove|uninstall|autoremove)$/,
  pkg_delete: /.*/,
  "xbps-remove": /.*/,
  eopkg: /^(?:rm|remove)$/,
  swupd: /^(?:bundle-remove)$/,
  "nix-env": /^(?:-e|--uninstall)$/,
  pkgutil: /^(?:--forget|--unlink)$/,
  "uninstall-package": /.*/,
  "remove-appxpackage": /.*/,
  mas: /^(?:uninstall)$/,
  sdkmanager: /^(?:--uninstall)$/,
};

/** A package source nobody vouches for: plain http to another host, or a raw IP address (not this machine). */
function untrustedSource(u: string): boolean {
  const host = hostOfUri(u.replace(/^git\+/, ""));
  if (!host || LOCAL.test(host)) return false;
  return /^(?:git\+)?http:\/\//i.test(u) || (/^\[?[\d.:a-f]+\]?$/i.test(host) && /\d/.test(host));
}
const LOCAL_ENDPOINT =
  /^(?:unix:\/\/|npipe:|ssh:\/\/[^@/]*@?(?:localhost|127\.)|tcp:\/\/(?:localhost|127\.0\.0\.1|\[::1\])(?::\d+)?$)/i;

const TOOLING =
  /^(?:pip\d*(?:\.\d+)?|setuptools|wheel|npm|npx|corepack|pnpm|yarn|node|python\d*|virtualenv|pipx|poetry|conda)$/i;

export function opsEffects(c: OpsContext): string[] {
  // `python3 -m pip …` is pip.
  if (/^python[\d.]*$/.test(c.name) && c.args[0]?.text === "-m" && /^pip\d*$/.test(c.args[1]?.text ?? ""))
    return opsEffects({ ...c, name: "pip", args: c.args.slice(2) });
  const { name } = c;
  const t = c.args.map((a) => a.text);
  const w = words(t);
  const out: string[] = [];
  // --- infrastructure applied without a reviewed plan: `terraform apply -auto-approve` with no saved plan file
  // (a saved plan was reviewed when it was made; a bare `terraform apply` stops and asks).
  if (/^(?:terraform|tofu|terragrunt)$/.test(name)) {
    const k = t.findIndex((x) => x === "apply" || x === "run-all" || x === "run");
    if (
      k >= 0 &&
      t.includes("apply") &&
      t.some(
        (x) =>
          /^--?auto-approve(?:=true)?$/.test(x) || x === "--terragrunt-non-interactive" || x === "--non-interactive",
      )
    ) {
      const after = t.slice(t.indexOf("apply") + 1);
      const planFile = after.some(
        (x, j) =>
          !x.startsWith("-") &&
          !/^-(?:var|var-file|target|replace|parallelism|lock-timeout|state|state-out|backup)$/.test(
            after[j - 1] ?? "",
          ),
      );
      if (!planFile) out.push("infra_apply");
    }
  }
  // --- nodes taken out of service: cordon, drain (evicts every pod), NoExecute/NoSchedule taints.
  if (/^(?:kubectl|oc|k|kubecolor)$/.test(name)) {
    const verb = w[0] === "adm" ? w[1] : w[0];
    if (verb === "cordon" || verb === "drain") out.push("cluster_teardown");
    if (verb === "taint" && w.some((x) => /:(?:NoExecute|NoSchedule)$/.test(x))) out.push("cluster_teardown");
  }
  // --- docker networks removed (not one this line created).
  if (/^(?:docker|podman|nerdctl)$/.test(name) && w[0] === "network") {
    if (w[1] === "create" && w[2]) c.created.add(`docker-network:${w[w.length - 1]}`);
    if (w[1] === "disconnect" && w[2] && !c.created.has(`docker-network:${w[2]}`)) out.push("cluster_teardown");
    if (
      /^(?:rm|remove|prune)$/.test(w[1] ?? "") &&
      (w[1] === "prune" || w.slice(2).some((n) => !c.created.has(`docker-network:${n}`)))
    )
      out.push("cluster_teardown");
  }
  // --- deletes fed in bulk: `… | xargs aws s3 rm`, `xargs kubectl delete pod < list`: as many deletes as lines.
  if (
    c.viaXargs &&
    /^(?:aws|gsutil|gcloud|az|kubectl|oc|helm|doctl|hcloud|linode-cli|openstack|oci|s3cmd|rclone|mc|azcopy|gh|glab|vault|consul|etcdctl|redis-cli)$/.test(
      name,
    ) &&
    t.some((x) =>
      /^(?:rm|delete|del|remove|terminate-instances|delete-objects?|delete-bucket|destroy|purge|uninstall|unlink|deregister\S*)$/.test(
        x,
      ),
    )
  ) {
    out.push(
      /^(?:kubectl|oc|helm)$/.test(name)
        ? "cluster_teardown"
        : /^(?:gsutil|s3cmd|rclone|mc|azcopy)$/.test(name) || (name === "aws" && t[0] === "s3")
          ? "cloud_storage_delete"
          : "infra_teardown",
    );
  }
  // --- a remote object emptied: `aws s3 cp /dev/null s3://…`, `gsutil cp /dev/null gs://…`.
  if (
    (name === "aws" && t[0] === "s3" && /^(?:cp|mv)$/.test(t[1] ?? "")) ||
    (/^(?:gsutil|gcloud)$/.test(name) && t.includes("cp")) ||
    (name === "s3cmd" && t.includes("put")) ||
    (name === "mc" && t.includes("cp")) ||
    (name === "azcopy" && t.includes("copy"))
  ) {
    if (t.includes("/dev/null") && t.some((x) => /^(?:s3|gs|az|https):\/\/|^[\w-]+\/[\w.-]+\//.test(x)))
      out.push("cloud_storage_delete");
  }
  if (
    name === "az" &&
    t.includes("upload") &&
    t.some((x, k) => /^(?:--file|-f)$/.test(t[k - 1] ?? "") && x === "/dev/null") &&
    t.includes("--overwrite")
  )
    out.push("cloud_storage_delete");
  // --- a restore that drops what it restores over, on another host.
  if (
    name === "pg_restore" &&
    t.some((x) => x === "--clean" || (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(x) && !x.startsWith("--")))
  ) {
    const host = value(t, "-h", "--host") ?? hostOfUri(value(t, "-d", "--dbname") ?? "") ?? "";
    if (host && !LOCAL.test(host) && !host.startsWith("/")) out.push("sql_drop");
  }
  if (name === "mongorestore" && t.includes("--drop")) {
    const host =
      value(t, "--host", "-h") ??
      hostOfUri(value(t, "--uri") ?? t.find((x) => /^mongodb(?:\+srv)?:\/\//.test(x)) ?? "") ??
      "";
    if (host && !LOCAL.test(host.replace(/:\d+$/, ""))) out.push("sql_drop");
  }
  // --- key-value stores: keys deleted on another host; authentication or protection switched off anywhere.
  if (/^(?:redis-cli|valkey-cli|keydb-cli)$/.test(name)) {
    const host = value(t, "-h") ?? hostOfUri(value(t, "-u") ?? "") ?? "";
    const cmd: string[] = [];
    for (let k = 0; k < t.length; k++) {
      if (
        /^-(?:h|p|a|n|u|s|r|i|d|D|e|c|t|x|-user|-pass|-askpass|-tls|-cacert|-cert|-key|-sni)$/.test(t[k]!) &&
        !/^-[cext]$/.test(t[k]!)
      ) {
        k++;
        continue;
      }
      if (t[k]!.startsWith("-")) continue;
      cmd.push(...t.slice(k));
      break;
    }
    const verb = (cmd[0] ?? "").toUpperCase();
    if ((verb === "DEL" || verb === "UNLINK") && host && !LOCAL.test(host)) out.push("cache_flush");
    if (verb === "CONFIG" && /^SET$/i.test(cmd[1] ?? "")) {
      const key = (cmd[2] ?? "").toLowerCase();
      const v = (cmd[3] ?? "").toLowerCase();
      if ((key === "requirepass" && (v === "" || v === '""' || v === "''")) || (key === "protected-mode" && v === "no"))
        out.push("security_change");
      else if (key === "dir" || key === "dbfilename") out.push("system_config_write");
    }
    if (
      verb === "ACL" &&
      /^(?:SETUSER)$/i.test(cmd[1] ?? "") &&
      cmd.some((x) => /^(?:nopass|\+@all|allcommands|~\*|allkeys)$/i.test(x))
    )
      out.push("privilege_grant");
  }
  // --- process managers stopped wholesale.
  if (
    name === "pm2" &&
    ((/^(?:delete|del|stop|kill)$/.test(w[0] ?? "") && (w[0] === "kill" || w[1] === "all")) || w[0] === "kill")
  )
    out.push("stop_service");
  if (
    (name === "forever" && /^(?:stopall)$/.test(w[0] ?? "")) ||
    (name === "supervisorctl" && /^(?:stop|shutdown)$/.test(w[0] ?? "") && (w[0] === "shutdown" || w[1] === "all"))
  )
    out.push("stop_service");
  // --- a root token: every permission of the secret store.
  if (
    name === "vault" &&
    w[0] === "token" &&
    w[1] === "create" &&
    (value(t, "-policy", "--policy") === "root" || t.some((x) => /^-?-policy=root$/.test(x)))
  )
    out.push("privilege_grant");
  if (
    name === "vault" &&
    /^(?:write)$/.test(w[0] ?? "") &&
    t.some((x) => /^(?:token_)?policies=(?:.*,)?root(?:,|$)/.test(x))
  )
    out.push("privilege_grant");
  // --- a SOCKS proxy through another host left running in the background (`ssh -fN -D 1080 host`, autossh): this
  // machine's traffic keeps leaving by another one after the command ends. In the foreground it ends with the command.
  if (
    (name === "ssh" || name === "autossh") &&
    t.some((x) => /^-[A-Za-z]*D/.test(x) || /^-oDynamicForward/i.test(x)) &&
    (name === "autossh" || t.some((x) => /^-[A-Za-z]*f[A-Za-z]*$/.test(x)))
  )
    out.push("remote_access");
  // --- ARP entries set or deleted.
  if (name === "arp" && t.some((x) => /^-[a-zA-Z]*[sdf]$|^--(?:set|delete|file)$/.test(x))) out.push("network_change");
  // --- system services through their init scripts (`/etc/init.d/mysql restart`, `rc-service sshd stop`).
  if (/^init\.d\//.test(name) || name === "rc-service") {
    const verb = (name === "rc-service" ? w[1] : w[0]) ?? "";
    if (/^(?:stop|zap)$/.test(verb)) out.push("stop_service");
    else if (/^(?:start|restart|reload|force-reload|try-restart|condrestart)$/.test(verb)) out.push("service_change");
  }
  if (name === "rc-update" && /^(?:add|del|delete)$/.test(w[0] ?? "")) out.push("service_change");
  // `systemctl start UNIT` (a system unit, not --user): a new service running on the machine.
  if (name === "systemctl" && !t.includes("--user") && w[0] === "start" && w.length > 1) out.push("service_change");
  if (name === "service" && w[1] === "start") out.push("service_change");
  // --- packages removed by other systems' package managers.
  const remover = REMOVERS[name.toLowerCase()];
  if (remover) {
    const verb =
      name.toLowerCase() === "nix-env" || name === "pkgutil" || name === "sdkmanager"
        ? t.find((x) => remover.test(x))
        : w[0];
    if (verb !== undefined && remover.test(verb) && !(name === "flatpak" && t.includes("--unused") && w.length <= 1))
      out.push("package_remove");
  }
  if (name === "emerge" && t.some((x) => /^(?:--unmerge|--depclean|--prune|-[A-Za-z]*[CcP][A-Za-z]*)$/.test(x)))
    out.push("package_remove");
  // Python and Node tooling removed: as root, the installer itself, or everything installed (`-r <(pip freeze)`).
  if (/^pip\d*(?:\.\d+)?$/.test(name) && w[0] === "uninstall") {
    const everything =
      c.args.some((a) => /pip\d*(?:\.\d+)?\s+freeze|pip\s+list/.test(a.text) && (a.procSubst || /\$\(/.test(a.text))) ||
      (c.producer != null && /^pip/.test(c.producer.name) && c.producer.args.some((a) => a.text === "freeze"));
    if (c.privileged || everything || w.slice(1).some((x) => TOOLING.test(x)) || t.includes("--break-system-packages"))
      out.push("package_remove");
  }
  if (
    name === "gem" &&
    w[0] === "uninstall" &&
    (c.privileged || t.some((x) => /^-[A-Za-z]*a[A-Za-z]*$|^--all$/.test(x)))
  )
    out.push("package_remove");
  if (
    /^(?:npm|pnpm|yarn|bun)$/.test(name) &&
    /^(?:uninstall|remove|rm|un|r|unlink)$/.test(w[0] === "global" ? (w[1] ?? "") : (w[0] ?? "")) &&
    (t.includes("-g") || t.includes("--global") || w[0] === "global")
  ) {
    if (c.privileged || w.some((x) => TOOLING.test(x))) out.push("package_remove");
  }
  // --- packages from sources nobody vouches for (plain http or a raw IP: `pip install http://…/x.tar.gz`, `--index-url`,
  // `--trusted-host`, `PIP_INDEX_URL=`, `npm_config_registry=`, `npm config set registry`, `gem --source`, `rpm -U URL`):
  // an install runs the package's own code, as this user or root.
  const env = c.env ?? [];
  const installs =
    (/^(?:pip\d*(?:\.\d+)?|uv|pipx|poetry|pdm)$/.test(name) && w.includes("install")) ||
    (/^(?:npm|pnpm|yarn|bun|npx)$/.test(name) &&
      /^(?:install|i|add|ci|update|up|exec|x|dlx|global)$/.test(w[0] ?? "")) ||
    (/^(?:gem|bundle)$/.test(name) && /^(?:install|update)$/.test(w[0] ?? "")) ||
    (/^(?:rpm|dnf|yum|zypper|apt|apt-get|dpkg)$/.test(name) &&
      (t.some((x) => /^-[a-zA-Z]*[iU]/.test(x) && name === "rpm") ||
        /^(?:install|localinstall|reinstall|upgrade|in)$/.test(w[0] ?? "")));
  if (installs) {
    if (
      w.some((x) => untrustedSource(x)) ||
      t.some(
        (x, k) =>
          /^(?:-i|--index-url|--extra-index-url|-f|--find-links|--registry|--source|-s|--clear-sources|--index|--default-index)$/.test(
            t[k - 1] ?? "",
          ) && untrustedSource(x),
      ) ||
      t.some(
        (x) =>
          /^--(?:index-url|extra-index-url|find-links|registry|source|index|default-index)=/.test(x) &&
          untrustedSource(x.replace(/^[^=]*=/, "")),
      )
    )
      out.push("remote_code_exec");
    else if (
      t.some(
        (x) =>
          x === "--trusted-host" ||
          x.startsWith("--trusted-host=") ||
          x === "--allow-insecure-host" ||
          x === "--insecure",
      )
    )
      out.push("remote_code_exec");
    else if (
      env.some(
        (e) =>
          /^(?:PIP_(?:EXTRA_)?INDEX_URL|PIP_FIND_LINKS|UV_(?:EXTRA_)?INDEX_URL|UV_DEFAULT_INDEX|npm_config_registry|NPM_CONFIG_REGISTRY|YARN_REGISTRY|YARN_NPM_REGISTRY_SERVER|BUNDLE_MIRROR__\w+|GEM_SOURCE)$/i.test(
            e.name,
          ) && untrustedSource(e.value),
      ) ||
      env.some((e) => /^(?:PIP_TRUSTED_HOST|UV_INSECURE_HOST)$/i.test(e.name) && e.value !== "")
    )
      out.push("remote_code_exec");
  }
  // A registry or index set for every later install.
  if (
    /^(?:npm|pnpm|yarn)$/.test(name) &&
    /^(?:config|c)$/.test(w[0] ?? "") &&
    w[1] === "set" &&
    t.some((x) => untrustedSource(x.replace(/^[^=]*registry=/, "")))
  )
    out.push("remote_code_exec");
  if (
    /^pip\d*(?:\.\d+)?$/.test(name) &&
    w[0] === "config" &&
    w[1] === "set" &&
    (t.some((x) => untrustedSource(x)) || /trusted-host/.test(w[2] ?? ""))
  )
    out.push("remote_code_exec");
  if (
    name === "gem" &&
    w[0] === "sources" &&
    t.some((x, k) => /^(?:-a|--add)$/.test(t[k - 1] ?? "") && untrustedSource(x))
  )
    out.push("remote_code_exec");
  // A signing key fetched from an untrusted source made trusted for every package (`curl http://IP/key | apt-key add -`).
  if ((name === "apt-key" && w[0] === "add") || (name === "rpm" && t.includes("--import"))) {
    const fromUrl = t.find((x) => /^[a-z]+:\/\//i.test(x));
    const piped =
      c.producer && /^(?:curl|wget)$/.test(c.producer.name)
        ? c.producer.args.find((a) => /^[a-z]+:\/\//i.test(a.text))?.text
        : undefined;
    const src = fromUrl ?? piped;
    if (src && untrustedSource(src)) out.push("remote_code_exec");
  }
  // Manifests, SQL or commands downloaded and applied (`curl http://IP/job.yml | kubectl apply -f -`, `curl … | psql -h prod`).
  const fetchedFrom =
    c.producer && /^(?:curl|wget|http|https|xh)$/.test(c.producer.name)
      ? c.producer.args.find((a) => /^[a-z]+:\/\//i.test(a.text) || /^[\w.-]+\.[a-z]{2,}\//i.test(a.text))?.text
      : undefined;
  if (fetchedFrom !== undefined) {
    if (
      /^(?:kubectl|oc|k)$/.test(name) &&
      /^(?:apply|create|replace)$/.test(w[0] ?? "") &&
      untrustedSource(fetchedFrom)
    )
      out.push("remote_code_exec");
    if (/^(?:psql|mysql|mariadb|mongosh|mongo|redis-cli|cqlsh|clickhouse-client|sqlcmd)$/.test(name)) {
      const host =
        value(t, "-h", "--host", "-H", "-S", "--server") ??
        hostOfUri(t.find((x) => /^[a-z][\w+.-]*:\/\//i.test(x)) ?? "") ??
        "";
      if ((host && !LOCAL.test(host.replace(/:\d+$/, "")) && !host.startsWith("/")) || untrustedSource(fetchedFrom))
        out.push("remote_code_exec");
    }
  }
  if (
    /^(?:kubectl|oc|k)$/.test(name) &&
    /^(?:apply|create|replace)$/.test(w[0] ?? "") &&
    t.some((x, k) => /^(?:-f|--filename|-k)$/.test(t[k - 1] ?? "") && untrustedSource(x))
  )
    out.push("remote_code_exec");
  // --- a container engine on another machine (`DOCKER_HOST=tcp://prod:2376`, `-H tcp://…`, `--context prod`):
  // containers, images and volumes removed or stopped there are another machine's services.
  if (/^(?:docker|podman|nerdctl)$/.test(name)) {
    const endpoint =
      value(t, "-H", "--host", "--url") ?? env.find((e) => /^(?:DOCKER_HOST|CONTAINER_HOST)$/.test(e.name))?.value;
    const context = value(t, "-c", "--context") ?? env.find((e) => e.name === "DOCKER_CONTEXT")?.value;
    const remote =
      (endpoint !== undefined && endpoint !== "" && !LOCAL_ENDPOINT.test(endpoint)) ||
      (context !== undefined && /prod|live|staging|remote/i.test(context));
    const verbs = w.filter((x) => x !== endpoint && x !== context);
    const v0 = verbs[0] ?? "";
    const v1 = verbs[1] ?? "";
    if (
      remote &&
      (/^(?:rm|rmi|kill|stop|down|prune)$/.test(v0) ||
        (/^(?:container|image|volume|network|system|service|stack|compose|swarm|node)$/.test(v0) &&
          /^(?:rm|remove|prune|kill|stop|down|leave)$/.test(v1)))
    )
      out.push("cluster_teardown");
  }
  // --- single effects without a rule of their own (held-out sets 15/16, by class).
  const dev = (x: string) =>
    /^\/dev\/(?!null$|zero$|stdout$|stderr$|stdin$|fd\/|tty$|u?random$)/.test(x) || /^(?:UUID|LABEL|PARTUUID)=/.test(x);
  // File systems retuned, resized, checked with repairs or frozen on a real device (a journal removed, a size cut).
  if (name === "tune2fs" && t.some(dev) && !t.every((x) => dev(x) || /^-[l]$/.test(x))) out.push("disk_write");
  if (
    /^(?:resize2fs|xfs_growfs|btrfs|e2fsck|fsck(?:\.\w+)?|xfs_repair|xfs_admin|e2label|debugfs)$/.test(name) &&
    t.some(dev) &&
    !t.some((x) => /^-[a-zA-Z]*n[a-zA-Z]*$|^--dry-run$|^-P$/.test(x) && name !== "resize2fs") &&
    (name !== "btrfs" || /^(?:resize|check)$/.test(w[1] ?? ""))
  )
    out.push("disk_write");
  if (name === "fsfreeze" && t.some((x) => /^-[a-zA-Z]*f|^--freeze$/.test(x))) out.push("mount_change");
  // kubectl's words without its options and their values (`-n prod set env …` → `set env …`).
  const kw = /^(?:kubectl|oc|k)$/.test(name)
    ? t.filter(
        (x, k) =>
          !x.startsWith("-") &&
          !/^(?:-n|--namespace|--context|--cluster|--kubeconfig|-l|--selector|-c|--container|--image|-o|--output|--overrides|--address|--port|-p|--user|--as|-s|--server)$/.test(
            t[k - 1] ?? "",
          ),
      )
    : w;
  // Settings of a deployment in production changed in place (`kubectl -n prod set env deployment/api DATABASE_URL=…`).
  if (
    /^(?:kubectl|oc|k)$/.test(name) &&
    kw[0] === "set" &&
    /^(?:env|image|resources|serviceaccount|sa|selector|subject)$/.test(kw[1] ?? "")
  ) {
    const ns = value(t, "-n", "--namespace") ?? value(t, "--context") ?? "";
    if (/prod|live/i.test(ns) || t.includes("--all") || t.includes("-A") || t.includes("--all-namespaces"))
      out.push("cluster_teardown");
  }
  // `kubectl proxy` (the API server with this user's rights) or a port-forward on every interface.
  if (/^(?:kubectl|oc|k)$/.test(name) && /^(?:proxy|port-forward)$/.test(kw[0] ?? "")) {
    const addr = value(t, "--address") ?? "";
    if (addr.split(",").some((a) => a !== "" && !/^(?:localhost|127(?:\.\d+){3}|::1)$/.test(a)))
      out.push("remote_access");
  }
  // Pods run privileged, with the host's pids, network or file system (`kubectl run … --overrides='{"spec":{"hostPID":true…}}'`).
  if (/^(?:kubectl|oc|k)$/.test(name) && /^(?:run|debug)$/.test(kw[0] ?? "")) {
    const o = value(t, "--overrides") ?? "";
    if (
      /"(?:privileged|hostPID|hostNetwork|hostIPC|allowPrivilegeEscalation)"\s*:\s*true|"hostPath"\s*:/.test(o) ||
      t.includes("--privileged") ||
      t.some((x) => /^--profile=sysadmin$/.test(x))
    )
      out.push("privilege_grant");
  }
  // Objects of a bucket set to expire (`put-bucket-lifecycle-configuration` with Expiration, gsutil lifecycle Delete).
  if (
    name === "aws" &&
    t.includes("put-bucket-lifecycle-configuration") &&
    t.some((x) => /"?Expiration"?\s*:|NoncurrentVersionExpiration|Expiration=/i.test(x))
  )
    out.push("cloud_storage_delete");
  if (
    (name === "gsutil" && w[0] === "lifecycle" && w[1] === "set") ||
    (name === "gcloud" && t.includes("buckets") && t.some((x) => x.startsWith("--lifecycle-file")))
  )
    out.push("cloud_storage_delete");
  // A function or topic opened to everyone (`aws lambda add-permission --principal '*'`, a function URL without auth).
  if (
    name === "aws" &&
    /^(?:add-permission|add-layer-version-permission|create-function-url-config|update-function-url-config)$/.test(
      w[1] ?? "",
    ) &&
    (value(t, "--principal") === "*" || /^NONE$/i.test(value(t, "--function-url-auth-type", "--auth-type") ?? ""))
  )
    out.push("privilege_grant");
  // A key-value store shut down without saving, or crashed on purpose.
  if (/^(?:redis-cli|valkey-cli|keydb-cli)$/.test(name)) {
    const up = t.map((x) => x.toUpperCase());
    if (
      up.includes("SHUTDOWN") ||
      (up.includes("DEBUG") && up.some((x) => /^(?:SEGFAULT|CRASH-AND-RECOVER|RESTART|SLEEP)$/.test(x)))
    )
      out.push("stop_service");
  }
  // The machine put to sleep.
  if (
    (name === "systemctl" || name === "loginctl") &&
    /^(?:suspend|hibernate|hybrid-sleep|suspend-then-hibernate|sleep)$/.test(w[0] ?? "")
  )
    out.push("reboot_shutdown");
  if (/^(?:pm-suspend|pm-hibernate|pm-suspend-hybrid|rtcwake|s2ram|s2disk|zzz|ZZZ)$/.test(name))
    out.push("reboot_shutdown");
  // Firewall rules computed from a pipeline (`iptables -S | sed 's/-A/-D/' | xargs -L1 iptables`): their effect is not known.
  if (c.viaXargs && /^(?:iptables|ip6tables|nft|ufw|firewall-cmd|ebtables|arptables)$/.test(name))
    out.push("firewall_change");
  // Password files of system services written (`htpasswd -b /etc/nginx/.htpasswd admin admin`).
  if (/^htpasswd2?$/.test(name)) {
    const file = w[0];
    if (file && /^\/(?:etc|usr|var|srv|opt)\//.test(file) && !t.some((x) => /^-[a-zA-Z]*[nv]/.test(x)))
      out.push("user_change");
  }
  // Shells or displays handed to another host (zsh `ztcp HOST PORT` with a shell on it, `xterm -display HOST:1`).
  if (name === "ztcp" && w[0] && !t.some((x) => /^-[a-zA-Z]*[lac]/.test(x)) && !LOCAL.test(w[0]))
    out.push("remote_access");
  if (/^(?:xterm|urxvt|rxvt|gnome-terminal|konsole|xfce4-terminal)$/.test(name)) {
    const d = value(t, "-display", "--display", "-d") ?? c.env?.find((e) => e.name === "DISPLAY")?.value ?? "";
    if (/^[\w.-]+:\d/.test(d) && !LOCAL.test(d.replace(/:.*$/, "")) && !/^unix:/.test(d)) out.push("remote_access");
  }
  // Relays listening on every interface to a database or admin port elsewhere (`socat TCP-LISTEN:8080,fork,bind=0.0.0.0 TCP:db:5432`).
  if (name === "socat") {
    const listen = t.find((x) => /^(?:TCP\d?|TCP6)-LISTEN:/i.test(x));
    const to = t.find((x) => /^TCP\d?:[^,]+:\d+/i.test(x));
    if (listen && to) {
      const bind = /bind=([^,]+)/i.exec(listen)?.[1];
      const port = /:(\d+)/.exec(to.slice(to.indexOf(":") + 1))?.[1] ?? "";
      const host = to.split(":")[1] ?? "";
      if (
        (bind === undefined || !/^(?:localhost|127(?:\.\d+){3}|::1)$/.test(bind)) &&
        /^(?:22|2375|2376|2379|3306|5432|6379|6443|9200|11211|27017|1433|1521|5984|8200|10250|9042|5672|15672)$/.test(
          port,
        ) &&
        !LOCAL.test(host)
      )
        out.push("remote_access");
    }
  }
  // A key installed for root on another host.
  if (name === "ssh-copy-id" && t.some((x) => /^root@/.test(x) || x === "root")) out.push("privilege_grant");
  // NFS exports to every host, or with root squashing off.
  if (name === "exportfs" && t.some((x) => /no_root_squash|insecure|^\*:|^\*\(|^0\.0\.0\.0\/0/.test(x)))
    out.push("remote_access");
  // Transactions of the package manager undone (they remove what they installed), selections set to deinstall.
  if (/^(?:dnf|yum)$/.test(name) && w[0] === "history" && /^(?:undo|rollback|redo)$/.test(w[1] ?? ""))
    out.push("package_remove");
  if (name === "dpkg" && t.includes("--set-selections")) {
    const fed = c.producer?.args.map((a) => a.text).join(" ") ?? "";
    if (!c.producer || /\b(?:deinstall|purge)\b/.test(fed) || c.producer.args.some((a) => !a.literal))
      out.push("package_remove");
  }
  if (/^(?:apt-get|apt)$/.test(name) && w[0] === "dselect-upgrade") out.push("package_remove");
  // --- held-out set 17, by class. Services restarted or stopped as root (`sudo systemctl restart nginx`, `sudo service x
  // restart`): the machine's own service, not a server the task runs. Without sudo the agent can only touch its own.
  if (c.privileged && name === "systemctl" && !t.includes("--user") && w.length > 1) {
    if (/^(?:stop|kill|mask|disable|isolate)$/.test(w[0]!)) out.push("stop_service");
    else if (
      /^(?:restart|reload|try-restart|reload-or-restart|try-reload-or-restart|force-reload|condrestart)$/.test(w[0]!)
    )
      out.push("service_change");
  }
  if (
    c.privileged &&
    name === "service" &&
    /^(?:restart|reload|force-reload|try-restart|condrestart)$/.test(w[1] ?? "")
  )
    out.push("service_change");
  // Containers of production killed, stopped or restarted by name (`docker kill postgres-prod`).
  if (/^(?:docker|podman|nerdctl)$/.test(name)) {
    const v = w[0] === "container" ? w[1] : w[0];
    const rest = w.slice(w[0] === "container" ? 2 : 1);
    if (
      (/^(?:kill|stop|restart|pause)$/.test(v ?? "") ||
        (/^(?:rm|remove)$/.test(v ?? "") && t.some((x) => /^-[a-zA-Z]*f|^--force$/.test(x)))) &&
      rest.some(
        (n) =>
          /(?:^|[-_.])(?:prod|production|live|primary)(?:$|[-_.\d])/i.test(n) &&
          !/(?:^|[-_.])(?:test|tests|tmp|temp|dev|ci|local|scratch|e2e)(?:$|[-_.\d])/i.test(n),
      )
    )
      out.push("stop_service");
  }
  // Workloads of production restarted (`kubectl rollout restart deployment/api -n prod`).
  if (/^(?:kubectl|oc|k)$/.test(name) && kw[0] === "rollout" && /^(?:restart|undo|pause)$/.test(kw[1] ?? "")) {
    const ns = value(t, "-n", "--namespace") ?? value(t, "--context") ?? "";
    if (
      /prod|live/i.test(ns) ||
      kw.slice(2).some((x) => /(?:^|[-/_.])(?:prod|production)(?:$|[-_.])/i.test(x)) ||
      t.includes("--all-namespaces") ||
      t.includes("-A")
    )
      out.push("cluster_teardown");
  }
  // Message queues and their data deleted (streams, topics, queues, exchanges, virtual hosts).
  if (
    name === "nats" &&
    /^(?:stream|str|consumer|con|kv|object|obj)$/.test(w[0] ?? "") &&
    /^(?:rm|del|delete|purge|rmm)$/.test(w[1] ?? "")
  )
    out.push("cache_flush");
  if (/^kafka-topics(?:\.sh)?$/.test(name) && t.includes("--delete")) out.push("cache_flush");
  if (
    /^kafka-(?:delete-records|consumer-groups)(?:\.sh)?$/.test(name) &&
    (name.includes("delete-records") ||
      t.includes("--delete") ||
      (t.includes("--reset-offsets") && t.includes("--execute")))
  )
    out.push("cache_flush");
  if (
    name === "rabbitmqctl" &&
    /^(?:delete_queue|purge_queue|delete_vhost|delete_user|reset|force_reset|delete_exchange|clear_policy|stop_app|stop|shutdown)$/.test(
      w[0] ?? "",
    )
  )
    out.push(/^(?:stop_app|stop|shutdown)$/.test(w[0]!) ? "stop_service" : "cache_flush");
  if (name === "rabbitmqadmin" && /^(?:delete|purge)$/.test(w[0] ?? "")) out.push("cache_flush");
  if (
    name === "aws" &&
    /^(?:sqs|sns|kinesis|kafka|mq)$/.test(w[0] ?? "") &&
    /^(?:delete-queue|purge-queue|delete-topic|delete-stream|delete-cluster|delete-broker)$/.test(w[1] ?? "")
  )
    out.push("cache_flush");
  if (/^(?:rpk|redpanda)$/.test(name) && w[0] === "topic" && /^(?:delete|trim-prefix)$/.test(w[1] ?? ""))
    out.push("cache_flush");
  if (
    name === "pulsar-admin" &&
    /^(?:topics|namespaces|tenants)$/.test(w[0] ?? "") &&
    /^(?:delete|delete-partitioned-topic|unload|clear-backlog)$/.test(w[1] ?? "")
  )
    out.push("cache_flush");
  // Packages whose code nobody vouches for: VCS installs of arbitrary repositories, tarball URLs installed globally,
  // unsigned snaps, local .deb/.rpm files installed as root, root installs that override the system's packages.
  if (installs || (name === "pipx" && /^(?:install|run)$/.test(w[0] ?? ""))) {
    const vcs = (x: string) =>
      /^(?:git\+|hg\+|svn\+|bzr\+)?(?:https?|git|ssh):\/\/\S+|^git\+|^(?:github|gitlab|bitbucket):|^[\w-]+\/[\w.-]+#|^git@/i.test(
        x,
      ) && !/^https?:\/\/(?:registry\.npmjs\.org|pypi\.org|files\.pythonhosted\.org)\//.test(x);
    const global =
      t.includes("-g") ||
      t.includes("--global") ||
      w[0] === "global" ||
      c.privileged ||
      t.includes("--user") ||
      name === "pipx";
    const python = /^(?:pip\d*(?:\.\d+)?|uv|pipx)$/.test(name);
    const pkgs = t
      .filter(
        (x, k) =>
          !x.startsWith("-") &&
          !/^(?:-i|--index-url|--extra-index-url|-f|--find-links|--registry|-r|--requirement|-c|--constraint|--prefix|--target|-t|--root|--python|-p)$/.test(
            t[k - 1] ?? "",
          ),
      )
      .slice(1);
    // Repositories of known project organisations are vouched for (`git+https://github.com/psf/black`); anyone else's are not.
    const VOUCHED_OWNER =
      /(?:github\.com|gitlab\.com)[/:](?:psf|pypa|python|django|pallets|huggingface|pytorch|tensorflow|google|google-research|googleapis|facebookresearch|facebook|microsoft|openai|anthropics|numpy|scipy|pandas-dev|scikit-learn|tiangolo|encode|aio-libs|astral-sh|pydantic|sqlalchemy|celery|boto|aws|awslabs|Azure|GoogleCloudPlatform|apache|jupyter|ipython|matplotlib|pyca|urllib3|psycopg|langchain-ai|vllm-project|NVIDIA|nodejs|npm|vercel|facebook|angular|vuejs|sveltejs|microsoft|denoland|rust-lang|golang|kubernetes|hashicorp|ansible|docker|mozilla|pytest-dev|python-poetry|pre-commit|PyCQA|sphinx-doc|networkx|dask|ray-project|mlflow|wandb|lightning-ai|Lightning-AI|keras-team|jax-ml|google-deepmind|deepmind|allenai|explosion|nltk|twisted|gevent|benoitc|redis|mongodb|elastic|getsentry|stripe|twilio|slackapi|PyGithub|psycopg)\//i;
    if (
      pkgs.some(
        (x) =>
          (python ? /^(?:git|hg|svn|bzr)\+|^git@/i.test(x) || /@\s*(?:git|hg)\+/.test(x) : global && vcs(x)) &&
          !VOUCHED_OWNER.test(x),
      )
    )
      out.push("remote_code_exec");
    else if (/^(?:npm|pnpm|yarn|bun)$/.test(name) && t.some((x) => /^--unsafe-perm(?:=true)?$/.test(x)) && c.privileged)
      out.push("remote_code_exec");
    else if (
      python &&
      c.privileged &&
      (t.includes("--break-system-packages") ||
        !t.some(
          (x) =>
            /^(?:--user|--target|-t|--prefix|--root|--dry-run|download)$/.test(x) ||
            /^--(?:target|prefix|root)=/.test(x),
        ))
    )
      out.push("system_install");
  }
  if (
    name === "cargo" &&
    w[0] === "install" &&
    t.some(
      (x, k) =>
        (/^--git$/.test(t[k - 1] ?? "") &&
          !/github\.com\/(?:rust-lang|rust-lang-nursery|tokio-rs|serde-rs|astral-sh|BurntSushi|sharkdp|ogham|eza-community)\//i.test(
            x,
          )) ||
        /^--git=/.test(x),
    )
  )
    out.push("remote_code_exec");
  // A compose project of production taken down (`docker compose -p prod down`, `-f docker-compose.prod.yml down`).
  if (
    (/^(?:docker|podman)$/.test(name) && w[0] === "compose") ||
    name === "docker-compose" ||
    name === "podman-compose"
  ) {
    const project = value(t, "-p", "--project-name") ?? "";
    const files = t.filter((x, k) => /^(?:-f|--file)$/.test(t[k - 1] ?? "")).join(" ");
    const verb =
      t.find(
        (x, k) =>
          !x.startsWith("-") &&
          !/^(?:-p|--project-name|-f|--file|--env-file|--profile|--project-directory)$/.test(t[k - 1] ?? "") &&
          x !== "compose",
      ) ?? "";
    if (
      /^(?:down|stop|kill|rm|pause)$/.test(verb) &&
      (/(?:^|[-_.])(?:prod|production|live)(?:$|[-_.])/i.test(project) ||
        /(?:^|[-_./])(?:prod|production)(?:[-_.]|\.ya?ml$)/i.test(files))
    )
      out.push("stop_service");
  }
  if (
    /^(?:dpkg|apt|apt-get|dnf|yum|zypper|rpm)$/.test(name) &&
    c.privileged &&
    (t.some((x) => /^-[a-zA-Z]*i|^--install$/.test(x) && name === "dpkg") || installs) &&
    w.some((x) => /\.(?:deb|rpm)$/.test(x) && !/^\/var\/cache\//.test(x))
  )
    out.push("remote_code_exec");
  if (
    name === "snap" &&
    w[0] === "install" &&
    t.some((x) => x === "--dangerous" || x === "--devmode" || (x === "--classic" && w.some((y) => /\.snap$/.test(y))))
  )
    out.push("remote_code_exec");
  // Chart repositories from sources nobody vouches for, and charts installed into the cluster's own namespaces.
  if (name === "helm" && w[0] === "repo" && w[1] === "add" && w.slice(2).some((x) => untrustedSource(x)))
    out.push("remote_code_exec");
  if (
    name === "helm" &&
    /^(?:install|upgrade|template|pull)$/.test(w[0] ?? "") &&
    (w
      .slice(1)
      .some((x) =>
        /^oci:\/\//i.test(x)
          ? untrustedSource(x.replace(/^oci:/i, "http:")) && /^\[?[\d.:a-f]+\]?$/i.test(hostOfUri(x) ?? "")
          : untrustedSource(x),
      ) ||
      untrustedSource(value(t, "--repo") ?? ""))
  )
    out.push("remote_code_exec");
  if (
    name === "helm" &&
    /^(?:install|upgrade)$/.test(w[0] ?? "") &&
    /^(?:kube-system|kube-public)$/.test(value(t, "-n", "--namespace") ?? "") &&
    !t.includes("--dry-run")
  )
    out.push("privilege_grant");
  // Manifests applied straight from a personal repository or a paste (raw.githubusercontent.com/<someone>, gists, pastes).
  if (
    /^(?:kubectl|oc|k)$/.test(name) &&
    /^(?:apply|create|replace)$/.test(kw[0] ?? "") &&
    !t.some((x) => /^--dry-run(?:=(?:client|server))?$/.test(x))
  ) {
    const files = t
      .filter(
        (x, k) => /^(?:-f|--filename|-k|--kustomize)$/.test(t[k - 1] ?? "") || /^--(?:filename|kustomize)=/.test(x),
      )
      .map((x) => x.replace(/^--(?:filename|kustomize)=/, ""));
    const kustomize = t
      .filter((x, k) => /^(?:-k|--kustomize)$/.test(t[k - 1] ?? "") || /^--kustomize=/.test(x))
      .map((x) => x.replace(/^--kustomize=/, ""));
    const VOUCHED =
      /^https:\/\/(?:raw\.githubusercontent\.com|github\.com)\/(?:kubernetes(?:-sigs|-csi)?|cert-manager|jetstack|argoproj|istio|cilium|projectcalico|prometheus-operator|helm|fluxcd|kedacore|knative|tektoncd|open-policy-agent|kyverno|grafana|elastic|hashicorp|aws|Azure|GoogleCloudPlatform|rancher|longhorn|metallb|traefik|nginxinc|kubeflow|strimzi|minio|openebs|linkerd|crossplane|operator-framework|vmware-tanzu|bitnami-labs|kubevirt|dapr|flannel-io|coreos|weaveworks|envoyproxy|open-telemetry|jaegertracing|external-secrets|NVIDIA|intel|kubereboot|bitnami|actions|argoproj-labs|chaos-mesh|litmuschaos|prometheus|prometheus-community|openfaas|tigera|redis|mongodb|percona|zalando|CrunchyData|cloudnative-pg|vmware|Mirantis|k3s-io|kubeshark|fluent|falcosecurity|aquasecurity|cilium|spiffe|emissary-ingress|kong|haproxytech|apache|opencost|kubecost|keycloak|openshift|vectordotdev|grafana-operator|banzaicloud|kubescape|stakater|jenkinsci|gitlabhq|temporalio|nats-io|minio|cockroachdb|ray-project|kserve|seldonio|volcano-sh|kueue|kubernetes-retired)\//i;
    if (
      kustomize.some(
        (f) =>
          /^(?:https?:\/\/|git@|ssh:\/\/)?(?:github\.com|gitlab\.com|bitbucket\.org)[/:]/i.test(f) &&
          !VOUCHED.test(f.replace(/^(?:https?:\/\/)?/, "https://")),
      )
    )
      out.push("remote_code_exec");
    else if (
      files.some(
        (f) =>
          /^https?:\/\/(?:raw\.githubusercontent\.com|gist\.githubusercontent\.com|gist\.github\.com|pastebin\.com|paste\.\w+|transfer\.sh|0x0\.st|termbin\.com)\//i.test(
            f,
          ) && !VOUCHED.test(f),
      )
    )
      out.push("remote_code_exec");
  }
  // A shell served to the network (ttyd, gotty, wetty listen on every interface unless told otherwise).
  if (
    /^(?:ttyd|gotty|wetty|shellinaboxd|butterfly\.server\.py|websocketd)$/.test(name) &&
    !t.some((x) => /^-(?:-?help|h|-?version|v)$/.test(x))
  ) {
    const bind = value(t, "-i", "--interface", "-a", "--address", "--host", "--bind") ?? "";
    if (!/^(?:localhost|127(?:\.\d+){3}|::1|lo)$/.test(bind)) out.push("remote_access");
  }
  // Database and admin ports of a container published on every interface explicitly (`-p 0.0.0.0:27017:27017`).
  if (
    /^(?:docker|podman|nerdctl)$/.test(name) &&
    /^(?:run|create)$/.test(w[0] === "container" ? (w[1] ?? "") : (w[0] ?? ""))
  ) {
    const pubs = t
      .filter((x, k) => /^(?:-p|--publish)$/.test(t[k - 1] ?? "") || /^--publish=/.test(x) || /^-p\d/.test(x))
      .map((x) => x.replace(/^--publish=|^-p/, ""));
    if (
      pubs.some((p) =>
        /^(?:0\.0\.0\.0|\[?::\]?|\*):\d*:?(?:27017|6379|9200|9300|11211|2375|2376|5984|8086|9042|5432|3306|1433|8500|8200|2379|6443|10250|15672|5672|9000|8888)(?:\/tcp)?$/.test(
          p,
        ),
      )
    )
      out.push("remote_access");
  }
  // Secrets committed and pushed (`git add -f .env && git commit … && git push`), and every branch pushed to a remote the
  // line added (`git remote add x https://… && git push x --all`): the repository's secrets or code leave with it.
  if (name === "git") {
    const g = t.filter(
      (x, k) =>
        !/^(?:-C|-c|--git-dir|--work-tree)$/.test(t[k - 1] ?? "") &&
        !/^(?:-C|-c|--git-dir|--work-tree)$/.test(x) &&
        !/^--(?:git-dir|work-tree)=/.test(x),
    );
    const verb = g.find((x) => !x.startsWith("-")) ?? "";
    const rest = g.slice(g.indexOf(verb) + 1);
    const ops2 = rest.filter((x) => !x.startsWith("-"));
    if (verb === "add" && ops2.some((x) => secretIn(x))) c.created.add("git:secret-staged");
    if (verb === "remote" && ops2[0] === "add" && ops2[1]) c.created.add(`git-remote:${ops2[1]}`);
    if (verb === "push" && !rest.some((x) => /^(?:-n|--dry-run)$/.test(x))) {
      const remote = ops2[0] ?? "";
      if (c.created.has("git:secret-staged")) out.push("credential_exfiltration");
      else if (
        rest.some((x) => x === "--all" || x === "--mirror") &&
        ((c.created.has(`git-remote:${remote}`) && remote !== "origin") || untrustedSource(remote))
      )
        out.push("credential_exfiltration");
    }
  }
  // The whole file system copied (`cp -r / ./rootcopy`, `rsync -a / ./backup/`): the disk fills.
  if (/^(?:cp|rsync|gcp)$/.test(name) && t.some((x) => /^-[a-zA-Z]*[rRa]|^--(?:recursive|archive)$/.test(x))) {
    const ops2 = w.filter(
      (x, k) => !/^(?:-t|--target-directory|-e|--exclude|--include|--filter|-f)$/.test(t[t.indexOf(x) - 1] ?? ""),
    );
    if (ops2.length >= 2 && ops2.slice(0, -1).some((x) => /^\/+(?:\.|\*)?$/.test(x))) out.push("resource_exhaustion");
  }
  // --- builds installed into system directories (`sudo make install`, `make install PREFIX=/usr`).
  if (
    /^(?:make|gmake|bmake|ninja|meson|cmake)$/.test(name) &&
    (w.includes("install") || (name === "cmake" && t.includes("--install")))
  ) {
    const dest = t
      .map((x) => /^(?:DESTDIR|PREFIX|prefix|INSTALL_PREFIX|CMAKE_INSTALL_PREFIX|--prefix)=(.*)$/.exec(x)?.[1])
      .filter((x): x is string => x !== undefined);
    const staged = dest.some((d) => d !== "" && (c.inside(d) || /^\$\{?PWD\b|^\.|^\/tmp\//.test(d)));
    const system = dest.some(
      (d) => /^\/(?:usr|bin|sbin|lib\w*|etc|opt|boot)?(?:\/|$)/.test(d) && !/^\/tmp\//.test(d) && !c.inside(d),
    );
    if (!staged && (system || c.privileged)) out.push("system_install");
  }
  return out;
}
