/**
 * Windows and macOS system commands judged by effect (judge.ts calls `windowsEffects` for every simple command).
 * cmd built-ins and Windows tools arrive here with their `.exe` removed (analyse.ts displayName), after `cmd /c`
 * and `powershell -Command` were unwrapped. A table by effect: deletion, disks and backups, services, firewall and
 * network, users, scheduled tasks and login items, registry, power, permissions, security, WSL.
 * Read-only neighbours (`dir`, `sc query`, `netsh … show`, `reg query`, `diskutil list`, `Get-Service`, …) match no row.
 */

/** What a Windows/macOS command does: a class key, or a delete of a path for judge.ts to place. */
export type WinEffect = { key: string } | { delete: string; recursive: boolean };

/** A Windows path that cannot be in the (POSIX) working directory: drive letters, UNC shares, environment folders. */
const WIN_ABSOLUTE = /^(?:[A-Za-z]:(?![\w.-]*@)|\\\\|%[A-Za-z_]+%|\$env:|\$HOME\b|~)/i;
/** System places on Windows. */
const WIN_SYSTEM =
  /^(?:[A-Za-z]:[\\/]*$|[A-Za-z]:[\\/]*(?:Windows|Program Files|Program Files \(x86\)|ProgramData|Boot|Recovery|System Volume Information)(?:[\\/]|$)|%(?:SystemRoot|windir|ProgramFiles|ProgramData|ProgramFiles\(x86\))%|\$env:(?:SystemRoot|windir|ProgramFiles|ProgramData))/i;
const WIN_CREDENTIAL =
  /[\\/](?:\.ssh|\.aws|\.kube|\.azure|\.gnupg|\.docker|\.git-credentials|\.netrc)(?:[\\/]|$)|[\\/]Microsoft[\\/](?:Credentials|Protect|Vault)(?:[\\/]|$)/i;

/** Where a Windows path lands, as a class for a delete: null when it is a relative (working-directory) path. */
/** A Windows path outside any POSIX working directory (a drive letter, a UNC share, `%VAR%`, `$env:`) written by a redirection. */
export function windowsWriteClass(path: string): string | null {
  const p = path.replace(/^["']|["']$/g, "");
  if (!/^(?:[A-Za-z]:(?![\w.-]*@)|\\\\|%[A-Za-z_]+%|\$env:)/i.test(p)) return null;
  if (WIN_CREDENTIAL.test(p)) return "credential_write";
  if (WIN_SYSTEM.test(p)) return "system_config_write";
  return "overwrite_outside_workdir";
}

export function windowsDeleteClass(path: string, recursive: boolean): string | null {
  const p = path.replace(/^["']|["']$/g, "");
  if (WIN_CREDENTIAL.test(p)) return "credential_write";
  if (WIN_SYSTEM.test(p)) return "delete_system_path";
  if (WIN_ABSOLUTE.test(p)) return recursive ? "recursive_delete" : "delete_outside_workdir";
  return null;
}

const SWITCH = /^\/[A-Za-z?]+(?::\S*)?$/;
const low = (xs: string[]) => xs.map((x) => x.toLowerCase());

/** Class findings of one command (name already lower-cased for Windows tools), or [] when none applies. */
export function windowsEffects(name: string, argv: string[]): WinEffect[] {
  const n = name.toLowerCase();
  const a = low(argv);
  const words = argv.filter((x) => !SWITCH.test(x) && !x.startsWith("-"));
  const w = low(words);
  const sw = (...xs: string[]) => a.some((x) => xs.includes(x) || xs.some((y) => x.startsWith(y + ":")));
  const k = (key: string): WinEffect[] => [{ key }];
  switch (n) {
    // --- deletion (cmd built-ins: `rd /s /q DIR`, `del /f /s /q DIR\*`)
    case "rd":
    case "rmdir":
    case "del":
    case "erase":
      if (!a.some((x) => SWITCH.test(x)) && !words.some((x) => WIN_ABSOLUTE.test(x) || x.includes("\\"))) return [];
      return words.map((p) => ({ delete: p, recursive: n === "rd" || n === "rmdir" || sw("/s") }));
    case "clear-recyclebin":
      return k("delete_outside_workdir");
    // `robocopy SRC DEST /MIR` (or /PURGE) deletes what SRC lacks from DEST.
    case "robocopy":
      return sw("/mir", "/purge") && words.length >= 2 && windowsDeleteClass(words[1]!, true) !== null
        ? [{ delete: words[1]!, recursive: true }]
        : [];
    case "attrib":
      return words.some((x) => WIN_ABSOLUTE.test(x) && !/^[~$]/.test(x)) && a.some((x) => /^[-+][rsh]$/.test(x))
        ? k("chmod_outside_workdir")
        : [];
    // --- logs
    case "wevtutil":
      return /^(?:cl|clear-log|um|uninstall-manifest|sl|set-log)$/.test(w[0] ?? "") ? k("log_wipe") : [];
    case "clear-eventlog":
    case "remove-eventlog":
    case "limit-eventlog":
      return k("log_wipe");
    // --- Windows features and packages
    case "uninstall-windowsfeature":
    case "remove-windowsfeature":
    case "disable-windowsoptionalfeature":
    case "remove-windowspackage":
    case "remove-windowscapability":
      return k("package_remove");
    case "dism":
      return a.some((x) =>
        /^\/(?:disable-feature|remove-package|remove-capability|remove-provisionedappxpackage)/.test(x),
      )
        ? k("package_remove")
        : [];
    // --- macOS: shutdown or restart through AppleScript
    case "osascript":
      return argv.some(
        (x) => /\b(?:shut ?down|restart|log ?out)\b/i.test(x) && /System Events|Finder|loginwindow/i.test(x),
      )
        ? k("reboot_shutdown")
        : [];
    // --- macOS system settings: disk encryption, remote login, kernel extensions, system defaults, power, updates that restart
    case "fdesetup":
      return /^(?:disable|remove|removerecovery|changerecovery)$/.test(w[0] ?? "") ? k("security_change") : [];
    case "systemsetup": {
      if (a.some((x, j) => /^-setremote(?:login|appleevents)$/.test(x) && a[j + 1] === "on")) return k("remote_access");
      return a.some((x) => /^-set/.test(x)) ? k("system_config_write") : [];
    }
    case "kextload":
    case "kextunload":
      return k("kernel_change");
    case "kmutil":
      return /^(?:load|unload|install|create)$/.test(w[0] ?? "") ? k("kernel_change") : [];
    case "defaults":
      return /^(?:write|delete|import|rename)$/.test(w[0] ?? "") && /^\/(?:Library|System)\//.test(words[1] ?? "")
        ? k("system_config_write")
        : [];
    case "pmset":
      return a.some((x) => /^-[abcu]$/.test(x)) || /^(?:sleepnow|restoredefaults|repeat|schedule)$/.test(w[0] ?? "")
        ? k("system_config_write")
        : [];
    case "softwareupdate":
      return a.some((x) => /^(?:-i|--install|-ia)$/.test(x)) && a.some((x) => /^(?:-R|--restart)$/.test(x))
        ? k("reboot_shutdown")
        : [];
    // --- disks, volumes and backups
    case "format":
      return words.some((x) => /^[A-Za-z]:$/.test(x)) ? k("format_filesystem") : [];
    case "diskpart":
      return sw("/s") ? k("erase_device") : [];
    case "vssadmin":
      return /^(?:delete|resize)$/.test(w[0] ?? "") ? k("volume_destroy") : [];
    case "wbadmin":
      return /^delete$/.test(w[0] ?? "") ? k("volume_destroy") : [];
    case "wmic":
      return a.includes("shadowcopy") && a.includes("delete")
        ? k("volume_destroy")
        : a.includes("delete") ||
            (a.includes("call") && a.some((x) => /^(?:terminate|uninstall|delete|format)$/.test(x)))
          ? k("stop_service")
          : [];
    case "cipher":
      return a.some((x) => x.startsWith("/w")) ? k("erase_device") : [];
    case "bcdedit":
      return a.some((x) => /^\/(?:set|delete|deletevalue|default|import|create|copy|bootsequence)$/.test(x))
        ? k("boot_config")
        : [];
    case "diskutil": {
      const v = w[0] ?? "";
      if (
        /^(?:erasedisk|erasevolume|zerodisk|randomdisk|secureerase|partitiondisk|reformat|splitpartition|mergepartitions|resizevolume)$/.test(
          v,
        )
      )
        return k("erase_device");
      if (
        v === "apfs" &&
        /^(?:deletecontainer|deletevolume|erasevolume|deletesnapshot|resizecontainer|encryptvolume|decryptvolume)$/.test(
          w[1] ?? "",
        )
      )
        return k("volume_destroy");
      if (v === "cs" && /^(?:delete|deletevolume)$/.test(w[1] ?? "")) return k("volume_destroy");
      if (v === "appleraid" && /^(?:delete|remove)$/.test(w[1] ?? "")) return k("volume_destroy");
      if (/^(?:unmount|unmountdisk|umount|umountdisk|eject|mount|mountdisk)$/.test(v)) return k("mount_change");
      return [];
    }
    case "tmutil":
      return /^(?:delete|deleteinprogress|disable|removedestination|disablelocal|thinlocalsnapshots|deletelocalsnapshots)$/.test(
        w[0] ?? "",
      )
        ? k("volume_destroy")
        : [];
    case "asr":
      return /^(?:restore|erase)$/.test(w[0] ?? "") || sw("--erase") ? k("erase_device") : [];
    // --- services (Windows service control, macOS launchd)
    case "net":
    case "net1": {
      const v = w[0] ?? "";
      if (v === "stop" || v === "pause") return words.length > 1 ? k("stop_service") : [];
      if (v === "start" || v === "continue") return words.length > 1 ? k("service_change") : [];
      // `net user NAME PASS /add`, `net user NAME /delete`, `net user NAME NEWPASS`, `net localgroup administrators NAME /add`.
      if (v === "user" || v === "localgroup" || v === "group") {
        if (sw("/add", "/delete", "/del", "/active", "/passwordreq", "/expires")) return k("user_change");
        if (v === "user" && words.length >= 3) return k("user_change"); // a new password
        return [];
      }
      if (v === "accounts" && a.some((x) => /^\/(?:minpwlen|maxpwage|minpwage|uniquepw|lockoutthreshold)/.test(x)))
        return k("user_change");
      if (v === "share" && (sw("/grant") || (words.length >= 2 && words[1]!.includes("=")))) return k("remote_access");
      return [];
    }
    case "sc": {
      const v = w[0] === undefined ? "" : /^\\\\/.test(words[0]!) ? (w[1] ?? "") : w[0];
      if (/^(?:stop|delete|pause)$/.test(v)) return k("stop_service");
      if (
        v === "config" &&
        a.some((x) => /^start=/.test(x)) &&
        a.some((x, j) => x === "disabled" || x === "start=disabled" || (a[j - 1] === "start=" && x === "disabled"))
      )
        return k("stop_service");
      if (/^(?:create|config|start|failure|sdset|privs)$/.test(v)) return k("service_change");
      return [];
    }
    case "launchctl": {
      const v = w[0] ?? "";
      if (/^(?:unload|bootout|disable|remove|stop|kill)$/.test(v)) return k("stop_service");
      if (/^(?:load|bootstrap|enable|submit|start|kickstart|setenv|config|reboot|limit)$/.test(v))
        return k(v === "reboot" ? "reboot_shutdown" : "service_change");
      return [];
    }
    // --- processes: system processes killed by image name, or every process matched by a wildcard or filter
    case "taskkill": {
      const images = argv.filter((x, j) => /^\/im$/i.test(argv[j - 1] ?? "")).map((x) => x.toLowerCase());
      if (
        images.some((x) =>
          /^\*|^(?:lsass|csrss|winlogon|wininit|smss|services|svchost|msmpeng|explorer|system|dwm|spoolsv)(?:\.exe)?$/.test(
            x,
          ),
        )
      )
        return k(images.some((x) => x.startsWith("*")) ? "kill_all_processes" : "stop_service");
      if (a.some((x, j) => a[j - 1] === "/fi" && /username|status eq|imagename eq \*/.test(x)))
        return k("kill_all_processes");
      return [];
    }
    // --- firewall and network
    case "netsh": {
      const s = a.join(" ");
      if (/\b(?:show|dump|help|\?)\b/.test(s) && !/\b(?:set|add|delete|reset|import)\b/.test(s)) return [];
      if (/\b(?:advfirewall|firewall|wfp)\b/.test(s) && /\b(?:set|add|delete|reset|import)\b/.test(s))
        return k("firewall_change");
      if (
        /\b(?:interface|int|winsock|winhttp|wlan|portproxy|routing|ras)\b/.test(s) &&
        /\b(?:set|add|delete|reset|import|connect|disconnect)\b/.test(s)
      )
        return /\bportproxy\b/.test(s) ? k("remote_access") : k("network_change");
      return [];
    }
    case "set-netfirewallprofile":
    case "set-netfirewallrule":
    case "new-netfirewallrule":
    case "remove-netfirewallrule":
    case "disable-netfirewallrule":
    case "enable-netfirewallrule":
      return k("firewall_change");
    case "socketfilterfw":
      return a.some((x) => /^--(?:setglobalstate|add|remove|setallowsigned|setblockall|unblockapp|blockapp)/.test(x))
        ? k("firewall_change")
        : [];
    case "route":
      return /^(?:add|delete|change|-f)$/.test(a[0] ?? "") || (sw("-f") && a.length === 1) ? k("network_change") : [];
    case "networksetup":
      return a.some((x) => /^-(?:set|remove|delete|add|create)/.test(x)) ? k("network_change") : [];
    // --- users
    case "dscl":
      return a.some((x) => /^-(?:create|delete|passwd|append|merge|change)$/.test(x)) ? k("user_change") : [];
    case "sysadminctl":
      return a.some((x) =>
        /^-(?:adduser|deleteuser|resetpasswordfor|newpassword|secureTokenOn|secureTokenOff|guestAccount|automaticTime)$/i.test(
          x,
        ),
      )
        ? k("user_change")
        : [];
    case "dseditgroup":
      return a.some((x, j) => x === "-o" && /^(?:edit|create|delete)$/.test(a[j + 1] ?? "")) ? k("user_change") : [];
    case "new-localuser":
    case "remove-localuser":
    case "set-localuser":
    case "add-localgroupmember":
    case "remove-localgroupmember":
    case "enable-localuser":
    case "disable-localuser":
    case "rename-localuser":
      return k("user_change");
    // --- scheduled tasks and login items
    case "schtasks":
      return sw("/create", "/change", "/delete", "/run") ? k("schedule_job") : [];
    case "register-scheduledtask":
    case "set-scheduledtask":
    case "unregister-scheduledtask":
    case "start-scheduledtask":
      return k("schedule_job");
    // --- registry
    case "reg":
      return /^(?:delete|add|import|restore|load|unload|copy)$/.test(w[0] ?? "") ? k("system_config_write") : [];
    case "regedit":
      return sw("/s") || words.some((x) => /\.reg$/i.test(x)) ? k("system_config_write") : [];
    case "set-itemproperty":
    case "new-itemproperty":
    case "remove-itemproperty":
    case "sp":
    case "rp":
      return argv.some((x) => /^(?:HKLM|HKCU|HKCR|HKU|HKCC|Registry)::?|^HKEY_/i.test(x))
        ? k("system_config_write")
        : [];
    // --- power
    case "shutdown":
      return a.some((x) => /^\/(?:s|r|p|h|g|sg|l|f|fw|soft|o)$/.test(x)) && !sw("/a", "/?") ? k("reboot_shutdown") : [];
    // --- permissions and ownership
    case "icacls":
    case "cacls":
    case "takeown": {
      const changes =
        n === "takeown" ||
        a.some((x) =>
          /^\/(?:grant|grant:r|deny|remove|remove:g|remove:d|setowner|reset|inheritance:[rde]|setintegritylevel|restore|e|g|p)$/.test(
            x,
          ),
        );
      if (!changes) return [];
      if (
        argv.some((x) =>
          /^(?:\*S-1-1-0|Everyone|Users|\*S-1-5-32-545|Authenticated Users|BUILTIN\\Users)(?::|$)/i.test(x),
        )
      )
        return k("world_writable");
      return words.some((x) => WIN_ABSOLUTE.test(x)) ? k("chmod_outside_workdir") : [];
    }
    // --- security features
    case "set-mppreference":
    case "add-mppreference":
      return argv.some((x) => /^-(?:Disable\w+|ExclusionPath|ExclusionProcess|ExclusionExtension)$/i.test(x))
        ? k("security_change")
        : [];
    case "set-executionpolicy":
      return !a.includes("process") && words.some((x) => /^(?:unrestricted|bypass)$/i.test(x))
        ? k("security_change")
        : [];
    case "csrutil":
    case "spctl":
      return a.some((x) =>
        /^(?:disable|--master-disable|--global-disable|authenticated-root|--disable|--add|clear)$/.test(x),
      )
        ? k("security_change")
        : [];
    case "nvram":
      return words.some((x) => x.includes("=")) || sw("-d", "-c") || a.includes("-d") || a.includes("-c")
        ? k("boot_config")
        : [];
    case "bless":
      return k("boot_config");
    // --- WSL and Hyper-V
    case "wsl":
    case "wslconfig": {
      if (a.some((x) => /^(?:--unregister|\/unregister|--uninstall)$/.test(x))) return k("volume_destroy");
      if (a.some((x) => /^(?:--shutdown|--terminate|-t|\/terminate)$/.test(x))) return k("stop_service");
      return [];
    }
    case "stop-vm":
    case "remove-vm":
      return k("infra_teardown");
  }
  return [];
}
