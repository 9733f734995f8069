/**
 * Operations effects that no rule of their own judged (judge.ts calls `opsEffects` for every simple command):
 * infrastructure applied without review, node drains, deletes fed in bulk through xargs, remote objects emptied,
 * restores that drop a remote database, key deletes and auth changes on remote stores, process managers stopped
 * wholesale, release tags deleted on the remote, root tokens, SOCKS tunnels, ARP entries; system services started
 * or restarted through their init scripts; packages removed by the package managers of other systems, the
 * Python/Node tooling itself removed, and builds installed into system directories.
 */
import type { JudgedArg, Producer } from "./judge.js";

const LOCAL = /^(?:localhost|[\w.-]+\.localhost|127(?:\.\d+){3}|0\.0\.0\.0|\[?::1\]?|::1|host\.docker\.internal)$/i;

export interface OpsContext {
  name: string;
  args: JudgedArg[];
  producer?: Producer | null;
  viaXargs?: boolean;
  privileged?: boolean;
  remote?: boolean;
  created: Set<string>;
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
  "mas": /^(?:uninstall)$/,
  "sdkmanager": /^(?:--uninstall)$/,
};

const TOOLING = /^(?:pip\d*(?:\.\d+)?|setuptools|wheel|npm|npx|corepack|pnpm|yarn|node|python\d*|virtualenv|pipx|poetry|conda)$/i;

export function opsEffects(c: OpsContext): string[] {
  // `python3 -m pip …` is pip.
  if (/^python[\d.]*$/.test(c.name) && c.args[0]?.text === "-m" && /^pip\d*$/.test(c.args[1]?.text ?? "")) return opsEffects({ ...c, name: "pip", args: c.args.slice(2) });
  const { name } = c;
  const t = c.args.map((a) => a.text);
  const w = words(t);
  const out: string[] = [];
  // --- infrastructure applied without a reviewed plan: `terraform apply -auto-approve` with no saved plan file
  // (a saved plan was reviewed when it was made; a bare `terraform apply` stops and asks).
  if (/^(?:terraform|tofu|terragrunt)$/.test(name)) {
    const k = t.findIndex((x) => x === "apply" || x === "run-all" || x === "run");
    if (k >= 0 && t.includes("apply") && t.some((x) => /^--?auto-approve(?:=true)?$/.test(x) || x === "--terragrunt-non-interactive" || x === "--non-interactive")) {
      const after = t.slice(t.indexOf("apply") + 1);
      const planFile = after.some((x, j) => !x.startsWith("-") && !/^-(?:var|var-file|target|replace|parallelism|lock-timeout|state|state-out|backup)$/.test(after[j - 1] ?? ""));
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
    if (/^(?:rm|remove|prune)$/.test(w[1] ?? "") && (w[1] === "prune" || w.slice(2).some((n) => !c.created.has(`docker-network:${n}`)))) out.push("cluster_teardown");
  }
  // --- deletes fed in bulk: `… | xargs aws s3 rm`, `xargs kubectl delete pod < list`: as many deletes as lines.
  if (c.viaXargs && /^(?:aws|gsutil|gcloud|az|kubectl|oc|helm|doctl|hcloud|linode-cli|openstack|oci|s3cmd|rclone|mc|azcopy|gh|glab|vault|consul|etcdctl|redis-cli)$/.test(name) && t.some((x) => /^(?:rm|delete|del|remove|terminate-instances|delete-objects?|delete-bucket|destroy|purge|uninstall|unlink|deregister\S*)$/.test(x))) {
    out.push(/^(?:kubectl|oc|helm)$/.test(name) ? "cluster_teardown" : /^(?:gsutil|s3cmd|rclone|mc|azcopy)$/.test(name) || (name === "aws" && t[0] === "s3") ? "cloud_storage_delete" : "infra_teardown");
  }
  // --- a remote object emptied: `aws s3 cp /dev/null s3://…`, `gsutil cp /dev/null gs://…`.
  if ((name === "aws" && t[0] === "s3" && /^(?:cp|mv)$/.test(t[1] ?? "")) || (/^(?:gsutil|gcloud)$/.test(name) && t.includes("cp")) || name === "s3cmd" && t.includes("put") || name === "mc" && t.includes("cp") || name === "azcopy" && t.includes("copy")) {
    if (t.includes("/dev/null") && t.some((x) => /^(?:s3|gs|az|https):\/\/|^[\w-]+\/[\w.-]+\//.test(x))) out.push("cloud_storage_delete");
  }
  if (name === "az" && t.includes("upload") && t.some((x, k) => /^(?:--file|-f)$/.test(t[k - 1] ?? "") && x === "/dev/null") && t.includes("--overwrite")) out.push("cloud_storage_delete");
  // --- a restore that drops what it restores over, on another host.
  if (name === "pg_restore" && t.some((x) => x === "--clean" || /^-[a-zA-Z]*c[a-zA-Z]*$/.test(x) && !x.startsWith("--"))) {
    const host = value(t, "-h", "--host") ?? hostOfUri(value(t, "-d", "--dbname") ?? "") ?? "";
    if (host && !LOCAL.test(host) && !host.startsWith("/")) out.push("sql_drop");
  }
  if ((name === "mongorestore") && t.includes("--drop")) {
    const host = value(t, "--host", "-h") ?? hostOfUri(value(t, "--uri") ?? t.find((x) => /^mongodb(?:\+srv)?:\/\//.test(x)) ?? "") ?? "";
    if (host && !LOCAL.test(host.replace(/:\d+$/, ""))) out.push("sql_drop");
  }
  // --- key-value stores: keys deleted on another host; authentication or protection switched off anywhere.
  if (/^(?:redis-cli|valkey-cli|keydb-cli)$/.test(name)) {
    const host = value(t, "-h") ?? hostOfUri(value(t, "-u") ?? "") ?? "";
    const cmd: string[] = [];
    for (let k = 0; k < t.length; k++) {
      if (/^-(?:h|p|a|n|u|s|r|i|d|D|e|c|t|x|-user|-pass|-askpass|-tls|-cacert|-cert|-key|-sni)$/.test(t[k]!) && !/^-[cext]$/.test(t[k]!)) {
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
      if ((key === "requirepass" && (v === "" || v === '""' || v === "''")) || (key === "protected-mode" && v === "no")) out.push("security_change");
      else if (key === "dir" || key === "dbfilename") out.push("system_config_write");
    }
    if (verb === "ACL" && /^(?:SETUSER)$/i.test(cmd[1] ?? "") && cmd.some((x) => /^(?:nopass|\+@all|allcommands|~\*|allkeys)$/i.test(x))) out.push("privilege_grant");
  }
  // --- process managers stopped wholesale.
  if (name === "pm2" && ((/^(?:delete|del|stop|kill)$/.test(w[0] ?? "") && (w[0] === "kill" || w[1] === "all")) || w[0] === "kill")) out.push("stop_service");
  if ((name === "forever" && /^(?:stopall)$/.test(w[0] ?? "")) || (name === "supervisorctl" && /^(?:stop|shutdown)$/.test(w[0] ?? "") && (w[0] === "shutdown" || w[1] === "all"))) out.push("stop_service");
  // --- a root token: every permission of the secret store.
  if (name === "vault" && w[0] === "token" && w[1] === "create" && (value(t, "-policy", "--policy") === "root" || t.some((x) => /^-?-policy=root$/.test(x)))) out.push("privilege_grant");
  if (name === "vault" && /^(?:write)$/.test(w[0] ?? "") && t.some((x) => /^(?:token_)?policies=(?:.*,)?root(?:,|$)/.test(x))) out.push("privilege_grant");
  // --- a SOCKS proxy through another host left running in the background (`ssh -fN -D 1080 host`, autossh): this
  // machine's traffic keeps leaving by another one after the command ends. In the foreground it ends with the command.
  if ((name === "ssh" || name === "autossh") && t.some((x) => /^-[A-Za-z]*D/.test(x) || /^-oDynamicForward/i.test(x)) && (name === "autossh" || t.some((x) => /^-[A-Za-z]*f[A-Za-z]*$/.test(x)))) out.push("remote_access");
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
    const verb = name.toLowerCase() === "nix-env" || name === "pkgutil" || name === "sdkmanager" ? t.find((x) => remover.test(x)) : w[0];
    if (verb !== undefined && remover.test(verb) && !(name === "flatpak" && t.includes("--unused") && w.length <= 1)) out.push("package_remove");
  }
  if (name === "emerge" && t.some((x) => /^(?:--unmerge|--depclean|--prune|-[A-Za-z]*[CcP][A-Za-z]*)$/.test(x))) out.push("package_remove");
  // Python and Node tooling removed: as root, the installer itself, or everything installed (`-r <(pip freeze)`).
  if (/^pip\d*(?:\.\d+)?$/.test(name) && w[0] === "uninstall") {
    const everything = c.args.some((a) => /pip\d*(?:\.\d+)?\s+freeze|pip\s+list/.test(a.text) && (a.procSubst || /\$\(/.test(a.text))) || (c.producer != null && /^pip/.test(c.producer.name) && c.producer.args.some((a) => a.text === "freeze"));
    if (c.privileged || everything || w.slice(1).some((x) => TOOLING.test(x)) || t.includes("--break-system-packages")) out.push("package_remove");
  }
  if (name === "gem" && w[0] === "uninstall" && (c.privileged || t.some((x) => /^-[A-Za-z]*a[A-Za-z]*$|^--all$/.test(x)))) out.push("package_remove");
  if (/^(?:npm|pnpm|yarn|bun)$/.test(name) && /^(?:uninstall|remove|rm|un|r|unlink)$/.test(w[0] === "global" ? (w[1] ?? "") : (w[0] ?? "")) && (t.includes("-g") || t.includes("--global") || w[0] === "global")) {
    if (c.privileged || w.some((x) => TOOLING.test(x))) out.push("package_remove");
  }
  // --- builds installed into system directories (`sudo make install`, `make install PREFIX=/usr`).
  if (/^(?:make|gmake|bmake|ninja|meson|cmake)$/.test(name) && (w.includes("install") || (name === "cmake" && t.includes("--install")))) {
    const dest = t.map((x) => /^(?:DESTDIR|PREFIX|prefix|INSTALL_PREFIX|CMAKE_INSTALL_PREFIX|--prefix)=(.*)$/.exec(x)?.[1]).filter((x): x is string => x !== undefined);
    const staged = dest.some((d) => d !== "" && (c.inside(d) || /^\$\{?PWD\b|^\.|^\/tmp\//.test(d)));
    const system = dest.some((d) => /^\/(?:usr|bin|sbin|lib\w*|etc|opt|boot)?(?:\/|$)/.test(d) && !/^\/tmp\//.test(d) && !c.inside(d));
    if (!staged && (system || c.privileged)) out.push("system_install");
  }
  return out;
}
