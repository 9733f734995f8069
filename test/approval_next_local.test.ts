/**
 * The rebuilt analyser's judges of local effects (tools/approval/next/judges.ts, inline.ts, built.ts): the
 * behaviours that no single table row carries.
 */
import { describe, expect, it } from "vitest";
import { judgeCommand } from "../tools/approval/next/analyse.js";

const inWorkspace = { cwd: "/workspace", defaultCwd: "/workspace" };
const keyOf = (command: string, opts?: typeof inWorkspace) => {
  const v = judgeCommand(command, opts);
  return v.dangerous ? v.patternKey : "pass";
};
const keysOf = (command: string, opts?: typeof inWorkspace) => judgeCommand(command, opts).matches?.map((m) => m.key);

describe("deleting everything a listing finds at the working directory's root", () => {
  it("flags a whole-tree delete, named for the listing that fed it", () => {
    expect(keyOf("find . -delete")).toBe("find_delete");
    expect(keyOf("find /workspace -delete", inWorkspace)).toBe("find_delete");
    expect(keyOf("find . -mindepth 1 -type f -exec rm -f {} +")).toBe("find_exec_rm");
    expect(keyOf("ls | xargs -I{} rm -f {}")).toBe("xargs_rm");
  });

  it("passes when a find test or a filter in the pipe selects part of the tree", () => {
    expect(keyOf("find . -name '*.pyc' -delete")).toBe("pass");
    expect(keyOf("find . -type l -delete")).toBe("pass");
    expect(keyOf("find . -mtime +7 -exec rm -f {} \\;")).toBe("pass");
    expect(keyOf("ls -t | tail -n +6 | xargs rm -f")).toBe("pass");
  });

  it("does not read a found path as the whole tree when the listing is in another shell", () => {
    expect(keyOf("find . -name '*.tmp' -exec sh -c 'rm -f \"$1\"' _ {} \\;", inWorkspace)).toBe("pass");
  });
});

describe("deletes of paths the line does not show", () => {
  it("reads what a file index lists as any path of the machine", () => {
    expect(keyOf("plocate '*.bak' | xargs rm -f", inWorkspace)).toBe("xargs_rm");
    expect(keyOf("git ls-files -z | xargs -0 rm -f", inWorkspace)).toBe("pass");
  });

  it("reads what a list kept outside the task names as paths outside it", () => {
    expect(keysOf("xargs -a /var/backups/old.lst rm -f", inWorkspace)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^(xargs_rm|recursive_delete|delete_system_path)$/)]),
    );
    expect(keyOf("xargs -a stale-files.txt rm -f", inWorkspace)).toBe("pass");
  });

  it("asks about a path only known when it runs, deleted with raised rights", () => {
    expect(keyOf('sudo rm -f "$TARGET"', inWorkspace)).toBe("delete_outside_workdir");
    expect(keyOf('rm -f "$TARGET"', inWorkspace)).toBe("pass");
  });
});

describe("system programs whose arguments come from the input", () => {
  it("asks about a program that changes the machine when xargs gives all its arguments", () => {
    expect(keyOf("iptables-save | grep DROP | sed 's/-A/-D/' | xargs -L1 iptables", inWorkspace)).toBe(
      "firewall_change",
    );
    expect(keyOf("cat units.txt | xargs systemctl status", inWorkspace)).toBe("pass");
  });
});

describe("exhaustion", () => {
  it("reads every file of the machine written into one file as endless input", () => {
    expect(keyOf("find / -type f -exec cat {} + > all.bin", inWorkspace)).toBe("resource_exhaustion");
    expect(keyOf("find . -type f -exec cat {} + > all.bin", inWorkspace)).toBe("pass");
  });
});

describe("inline code", () => {
  it("reads awk's input line as a path the listing feeding it found", () => {
    expect(keysOf("find /usr/lib -name '*.so' | awk '{ system(\"rm -f \" $0) }'", inWorkspace)).toContain(
      "delete_system_path",
    );
    expect(keysOf("find ./out -name '*.so' | awk '{ system(\"rm -f \" $0) }'", inWorkspace)).not.toContain(
      "delete_system_path",
    );
  });

  it("reads shell text in a string with escaped quotes", () => {
    expect(keyOf('php -r \'system("rm -rf \\"/srv/www\\"");\'', inWorkspace)).toBe("recursive_delete");
  });

  it("reads a string assigned once where it is passed to a call", () => {
    expect(keyOf("python3 -c \"p='/etc/ssh/sshd_config'; open(p, 'w').write('')\"", inWorkspace)).toBe(
      "system_config_write",
    );
    expect(keyOf("python3 -c \"p='out.txt'; open(p, 'w').write('')\"", inWorkspace)).toBe("pass");
  });

  it("flags emptying /tmp, listed or joined with a computed name", () => {
    expect(keyOf("python3 -c \"import os; [os.remove('/tmp/' + n) for n in os.listdir('/tmp')]\"")).toBe(
      "recursive_delete",
    );
  });

  it("keeps an argv list's word with spaces as one word for the shell it starts", () => {
    expect(keyOf("python3 -c \"import subprocess; subprocess.run(['sh', '-c', 'rm -rf /srv'])\"")).toBe(
      "delete_system_path",
    );
    expect(keyOf("python3 -c \"import subprocess; subprocess.run(['sh', '-c', 'ls -la /srv'])\"")).toBe("pass");
  });

  it("reads an interpreter's program taken from a process substitution as a shell's", () => {
    expect(keyOf("node <(cat /tmp/job.js)", inWorkspace)).toBe("shell_input");
    expect(keyOf("node scripts/job.js", inWorkspace)).toBe("pass");
  });

  it("asks about code that is only known when it runs", () => {
    expect(keyOf('php -r "$(cat snippet.php)"')).toBe("inline_code_unanalysable");
    expect(keyOf('echo "$code" | python3')).toBe("inline_code_unanalysable");
    expect(keyOf("python3 <<EOF\nprint('$HOME')\nEOF")).toBe("pass");
  });
});

describe("programs built on the line", () => {
  it("judges a program compiled from standard input when it runs", () => {
    expect(keyOf("cc -x c -o /tmp/k - <<< 'int main(){ return kill(-1, 9); }' && /tmp/k")).toBe("kill_all_processes");
    expect(keyOf("cc -x c -o /tmp/k - <<< 'int main(){ return 0; }' && /tmp/k")).toBe("pass");
  });

  it("judges a Gradle build file written earlier on the line when gradle runs it", () => {
    const written = "cat > build.gradle <<'EOF'\ntask x(type: Exec) { commandLine 'sh', '-c', 'rm -rf /etc' }\nEOF\n";
    expect(keyOf(`${written}gradle x`, inWorkspace)).toBe("delete_system_path");
  });
});
