/**
 * Data: what the process and runtime-argument judges read (pids.ts, judges.ts): process listers and the
 * programs whose effect is in arguments given at run time.
 */
import type { ClassKey } from "../classes.js";

/** What pids.ts reads of process listers: `$(pgrep …)`, filters that narrow a `ps` listing, `ps` selections. */
export const PID_LISTINGS = {
  substituted: /^\$\(\s*(pgrep|pidof)\s+([^)|`]*)\)$/,
  /** Filters that narrow a `ps` listing to some processes (grep, or awk with a pattern or a comparison). */
  narrowing: /^(grep|egrep|fgrep|rg)$/,
  awkPattern: /\/[^/]+\/|==|~/,
  /** `ps` options that already select processes (by pid, user, command). */
  psSelects: /^-[a-zA-Z]*[pCuUgGt]|^--(pid|ppid|user|group)/,
};

/**
 * Programs that change the machine's state by what their arguments say: run with every argument taken from
 * the input (`… | sed 's/-A/-D/' | xargs -L1 iptables`), they are asked about as the class given.
 */
export const RUNTIME_ARGUMENT_PROGRAMS = new Map(
  Object.entries<ClassKey>({
    iptables: "firewall_change",
    ip6tables: "firewall_change",
    nft: "firewall_change",
    ufw: "firewall_change",
    "firewall-cmd": "firewall_change",
    ip: "network_change",
    ifconfig: "network_change",
    route: "network_change",
    tc: "network_change",
    systemctl: "service_change",
    service: "service_change",
    sysctl: "kernel_change",
    modprobe: "kernel_change",
    rmmod: "kernel_change",
    useradd: "user_change",
    userdel: "user_change",
    usermod: "user_change",
    passwd: "user_change",
    mount: "mount_change",
    umount: "mount_change",
  }),
);
