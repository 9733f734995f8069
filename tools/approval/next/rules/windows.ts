/**
 * Windows programs and PowerShell cmdlets (data). `cmd /c TEXT` and `powershell -Command TEXT` hand their
 * text to ../windows.ts, which rewrites it lower-cased with `/c/…` drive paths and `/` separators; the
 * rows below match that spelling. Switches are written `/x` by cmd tools and `-x` by cmdlets: the `args`
 * tests accept both. Examples run with working directory /workspace.
 */
import type { Rule } from "./types.js";

export interface WindowsShell {
  /** The switch after which the rest of the words is the command text. */
  command: string[];
  /** Without the switch: the text starts at the first word like this (a cmdlet name). */
  bare: RegExp;
  /** Options that take a value (that value is never the text). */
  valued: string[];
  /** Longer switches of the shell's tools (`/mir`, `/purge`, `/active:yes`), read as options, not paths. */
  switches?: RegExp;
}

const POWERSHELL: WindowsShell = {
  command: ["-c", "-command", "-com", "-cmd"],
  bare: /^["']?[a-z]+-[a-z]+/i,
  valued: ["-executionpolicy", "-ep", "-windowstyle", "-w", "-configurationname", "-workingdirectory", "-wd"],
};
/**
 * The rewrites that make Windows command text read as bash (../windows.ts applies them in order, then
 * lower-cases the text): home directories as `~`, PowerShell's `$x` as `x`, drive paths as `/c/…`, `\` as `/`.
 */
export const WINDOWS_REWRITES: [RegExp, string][] = [
  [/\$(env:)?(home|userprofile)\b/gi, "~"],
  [/\$(?=[\w:]+)/g, ""],
  [/(^|[\s"'=(])([a-z]):[\\/]*/gi, "$1/$2/"],
  [/\\/g, "/"],
];
/** cmd's one- and two-letter switches (`/s`, `/q`, `/?`) in the lower-cased text: options, not paths under /. */
export const CMD_SWITCHES = /(^|\s)\/([a-z?]{1,2})(?=\s|$)/g;

/** `gci DIR … | Remove-Item`: what is removed is what DIR lists (../windows.ts); the listing's valued options. */
export const LISTED_REMOVAL = /\b(get-childitem|gci|dir|ls)\s+([^|;]*)\|\s*(remove-item|ri|rm|del)\b/g;
export const LIST_VALUED = /^-(filter|include|exclude|depth|attributes)$/;

const CMD: WindowsShell = {
  command: ["/c", "/k", "/r"],
  bare: /^$/,
  valued: [],
  switches: /(^|\s)\/([a-z]{3,12})(?=[\s:]|$)/g,
};

export const WINDOWS_SHELLS = new Map(
  Object.entries<WindowsShell>({
    powershell: POWERSHELL,
    "powershell.exe": POWERSHELL,
    pwsh: POWERSHELL,
    "pwsh.exe": POWERSHELL,
    cmd: CMD,
    "cmd.exe": CMD,
  }),
);

/** Processes whose end stops the machine's own services. */
const CRITICAL = /(^|\s)(lsass|csrss|winlogon|wininit|services|smss|svchost|msmpeng|explorer)(\.exe)?(\s|"|$)/i;

export const WINDOWS_RULES: Rule[] = [
  {
    program: ["remove-item", "ri", "del", "erase", "rd"],
    effect: "delete",
    key: "delete_outside_workdir",
    paths: "last",
    flag: ["pwsh -c 'Remove-Item -Recurse -Force /var/www'", 'cmd /c "rmdir /s /q D:\\builds\\cache"'],
    pass: [
      'pwsh -c "Remove-Item -Recurse -Force .\\out"',
      'cmd.exe /c "del /q dist\\*.map"',
      'cmd /c "rd /s /q build"',
    ],
  },
  {
    program: ["rmdir"],
    args: /(^|\s)[-/]s(\s|$)/i,
    effect: "delete",
    key: "delete_outside_workdir",
    paths: "last",
    flag: ['cmd /c "rmdir /s /q C:\\Users\\dev"'],
    pass: ['cmd /c "rmdir /s /q build"'],
  },
  {
    program: ["robocopy"],
    args: /(^|\s)[-/](mir|purge)(\s|$)/i,
    effect: "delete",
    key: "recursive_delete",
    paths: "last",
    unless: /(^|\s)[-/]l(\s|$)/i,
    flag: ['cmd.exe /c "robocopy C:\\empty C:\\Users\\dev\\Projects /MIR"'],
    pass: ['cmd /c "robocopy src dist /E"', 'cmd /c "robocopy .\\src .\\backup /MIR"'],
  },
  {
    // diskpart runs partitioning commands (clean, format, delete) from its script or its input
    program: ["diskpart", "diskpart.exe"],
    unless: /(^|\s)[-/]\?(\s|$)/,
    effect: "system",
    key: "erase_device",
    flag: ['cmd /c "diskpart /s C:\\ops\\clean.txt"'],
    pass: ['cmd /c "diskpart /?"'],
  },
  {
    program: ["cipher"],
    args: /(^|\s)[-/]w:/i,
    effect: "system",
    key: "erase_device",
    flag: ["cmd /c 'cipher /w:C:\\'"],
    pass: ['cmd /c "cipher /?"'],
  },
  {
    program: ["clear-disk", "format-volume", "format", "initialize-disk"],
    when: (ops, opts) => opts.some((o) => o !== "-?") || ops.some((o) => /^(\/[a-z]\/?|[a-z]:)$/i.test(o)),
    effect: "system",
    key: "format_filesystem",
    flag: ['cmd /c "format E: /FS:exFAT /Q"', 'pwsh -c "Format-Volume -DriveLetter D"'],
    pass: ['cmd /c "format /?"'],
  },
  {
    program: ["clear-recyclebin"],
    effect: "system",
    key: "delete_outside_workdir",
    flag: ['powershell "Clear-RecycleBin -Force"'],
    pass: ['powershell "Get-ChildItem"'],
  },
  {
    program: ["stop-computer", "restart-computer"],
    effect: "system",
    key: "reboot_shutdown",
    flag: ['pwsh -Command "Stop-Computer -Force"', 'powershell -c "Restart-Computer -Force"'],
    pass: ["pwsh -c 'Get-Date'"],
  },
  {
    program: ["stop-service", "remove-service", "suspend-service"],
    effect: "system",
    key: "stop_service",
    flag: ['pwsh -c "Stop-Service -Name sshd -Force"'],
    pass: ['powershell -NoProfile -Command "Get-Service | Where-Object Status -eq Running"'],
  },
  {
    program: ["set-service"],
    args: /-startuptype\s+disabled|-status\s+(stopped|paused)/i,
    effect: "system",
    key: "stop_service",
    flag: ['powershell -command "Set-Service -Name sshd -StartupType Disabled"'],
    pass: ['pwsh -c "Set-Service -Name app -StartupType Automatic"'],
  },
  {
    program: ["sc", "sc.exe"],
    verbs: [["stop", "delete", "config", "pause", "failure"]],
    effect: "system",
    key: "stop_service",
    flag: ["sc delete MyAgent", "sc.exe config wuauserv start= disabled"],
    pass: ["sc.exe query wuauserv", "sc qc Spooler"],
  },
  {
    program: ["sc", "sc.exe", "new-service"],
    verbs: [["create"]],
    effect: "system",
    key: "service_change",
    flag: ['"C:\\Windows\\System32\\sc.exe" create evil binPath= C:\\tools\\svc.exe'],
    pass: ["sc query state= all"],
  },
  {
    program: ["new-service"],
    effect: "system",
    key: "service_change",
    flag: ['pwsh -c "New-Service -Name x -BinaryPathName C:\\x.exe"'],
    pass: [],
  },
  {
    program: ["net", "net.exe"],
    verbs: [["stop", "pause"]],
    word: { from: 1 },
    effect: "system",
    key: "stop_service",
    flag: ['net stop "Windows Defender Antivirus Service"'],
    pass: ["net start"],
  },
  {
    program: ["net", "net.exe"],
    verbs: [["user", "localgroup", "group"]],
    when: (ops, opts) =>
      ops.length > 2 || opts.some((o) => /^[-/](add|delete|del|active|passwordreq|expires)/i.test(o)),
    effect: "system",
    key: "user_change",
    flag: ["net user Administrator NewPass123", 'cmd /c "net user guest /active:yes"'],
    pass: ["net user", "net localgroup administrators"],
  },
  {
    program: ["net", "net.exe"],
    verbs: [["user", "localgroup", "group"]],
    args: /(^|\s)[-/](add|delete|del|active)\b/i,
    effect: "system",
    key: "user_change",
    flag: ["net localgroup administrators bob /add"],
    pass: ["net user alice"],
  },
  {
    program: [
      "new-localuser",
      "remove-localuser",
      "disable-localuser",
      "enable-localuser",
      "set-localuser",
      "add-localgroupmember",
      "remove-localgroupmember",
    ],
    effect: "system",
    key: "user_change",
    flag: [
      'powershell -c "New-LocalUser -Name svc -NoPassword"',
      'powershell -c "Disable-LocalUser -Name Administrator"',
    ],
    pass: ['powershell -c "Get-LocalUser"'],
  },
  {
    program: ["taskkill", "taskkill.exe", "stop-process"],
    args: CRITICAL,
    effect: "system",
    key: "stop_service",
    flag: ['cmd /c "taskkill /F /IM lsass.exe"'],
    pass: ["taskkill /F /IM node.exe", "taskkill /PID 4242"],
  },
  {
    program: ["taskkill", "taskkill.exe"],
    args: /(^|\s)[-/]fi(\s|$)/i,
    effect: "system",
    key: "kill_all_processes",
    flag: ['taskkill /F /FI "USERNAME eq dev"'],
    pass: ["taskkill /IM app.exe"],
  },
  {
    program: ["reg", "reg.exe"],
    verbs: [["add", "delete", "import", "restore", "load", "unload", "copy"]],
    unless: /^add\s+hkcu/i,
    effect: "system",
    key: "system_config_write",
    flag: [
      "reg add HKLM\\SYSTEM\\CurrentControlSet\\Services\\WinDefend /v Start /t REG_DWORD /d 4 /f",
      "reg import tweaks.reg",
    ],
    pass: [
      'reg query "HKLM\\Software\\Microsoft\\Windows NT\\CurrentVersion" /v ProductName',
      "reg export HKCU\\Software\\MyApp myapp.reg",
    ],
  },
  {
    program: ["set-itemproperty", "new-itemproperty", "remove-itemproperty", "remove-item", "new-item", "set-item"],
    args: /(^|\s|['"])(hklm|registry::hkey_local_machine)(:|\/|\s)/i,
    effect: "system",
    key: "system_config_write",
    flag: ['powershell -c "Set-ItemProperty -Path HKLM:\\Software\\Policies\\Microsoft\\Windows -Name X -Value 1"'],
    pass: ['powershell -c "Set-ItemProperty -Path HKCU:\\Software\\MyApp -Name X -Value 1"'],
  },
  {
    program: ["netsh", "netsh.exe"],
    args: /(^|\s)(advfirewall|firewall)\s.*\b(add|set|delete|reset|import)\b/i,
    effect: "system",
    key: "firewall_change",
    flag: [
      "netsh firewall set opmode disable",
      'netsh advfirewall firewall add rule name="open" dir=in action=allow protocol=TCP localport=3389',
    ],
    pass: ["netsh advfirewall show allprofiles", "netsh interface ip show config"],
  },
  {
    program: ["new-netfirewallrule", "remove-netfirewallrule", "set-netfirewallprofile", "disable-netfirewallrule"],
    effect: "system",
    key: "firewall_change",
    flag: ['powershell -c "New-NetFirewallRule -DisplayName any -Direction Inbound -Action Allow"'],
    pass: ['powershell -c "Get-NetFirewallRule"'],
  },
  {
    program: ["schtasks", "schtasks.exe"],
    args: /(^|\s)[-/](create|change)(\s|$)/i,
    effect: "system",
    key: "schedule_job",
    flag: ['schtasks /Create /SC ONLOGON /TN upd /TR "C:\\Users\\Public\\u.exe"'],
    pass: ["schtasks /query /fo LIST"],
  },
  {
    program: ["register-scheduledtask", "set-scheduledtask", "new-scheduledtask"],
    effect: "system",
    key: "schedule_job",
    flag: ['pwsh -c "Register-ScheduledTask -TaskName upd -Action $action -Trigger $trigger"'],
    pass: ['pwsh -c "Get-ScheduledTask"'],
  },
  {
    program: ["set-mppreference", "add-mppreference"],
    args: /-disable\w*\s+(\S*true|1)|-exclusion\w*/i,
    effect: "system",
    key: "security_change",
    flag: ['powershell -Command "Set-MpPreference -DisableRealtimeMonitoring $true"'],
    pass: ['powershell -Command "Get-MpPreference"'],
  },
  {
    program: ["set-executionpolicy"],
    args: /(unrestricted|bypass)/i,
    effect: "system",
    key: "security_change",
    flag: ["powershell Set-ExecutionPolicy Unrestricted -Scope LocalMachine -Force"],
    pass: ["powershell Set-ExecutionPolicy RemoteSigned -Scope CurrentUser"],
  },
  {
    program: ["takeown"],
    args: /(^|\s)[-/]f\s+\S*(windows|program ?files|programdata)/i,
    effect: "system",
    key: "chmod_outside_workdir",
    flag: ['cmd /c "takeown /f C:\\Windows\\System32\\drivers\\etc\\hosts"', "takeown /f C:\\Windows\\System32"],
    pass: ['cmd /c "takeown /f build"'],
  },
  {
    program: ["icacls", "icacls.exe"],
    args: /[-/]grant\S*\s+["']?(everyone|users|\*s-1-1-0|authenticated users)/i,
    effect: "system",
    key: "world_writable",
    flag: ['cmd.exe /c "icacls C:\\Windows\\System32 /grant Everyone:F /T"'],
    pass: ["icacls build /grant dev:F"],
  },
  {
    program: ["wevtutil", "wevtutil.exe", "clear-eventlog"],
    word: { options: true },
    unless: /^(qe|gl|el|query-events|get-log|enum-logs)\b/i,
    effect: "system",
    key: "log_wipe",
    flag: ['cmd /c "wevtutil cl System"', 'powershell -c "Clear-EventLog -LogName Security"'],
    pass: ['cmd /c "wevtutil qe System /c:5"'],
  },
  {
    program: ["netsh", "netsh.exe"],
    args: /(^|\s)portproxy\s+(add|set)\b/i,
    effect: "system",
    key: "remote_access",
    flag: ["netsh interface portproxy add v4tov4 listenport=2222 connectaddress=10.0.0.5 connectport=22"],
    pass: ["netsh interface portproxy show all"],
  },
  {
    program: [
      "uninstall-windowsfeature",
      "remove-windowsfeature",
      "disable-windowsoptionalfeature",
      "uninstall-package",
    ],
    effect: "system",
    key: "package_remove",
    flag: ['powershell -c "Uninstall-WindowsFeature Web-Server"'],
    pass: ['powershell -c "Get-WindowsFeature"'],
  },
];
