#!/usr/bin/env node
/**
 * CPU per command of the persistent shell's protocol on its own (no sandbox): S host shells (HostShell, the
 * local backends' class: bash booted with bootScript, requests framed as the harness sends them) are each fed N
 * `echo x` commands, S at once; CPU of this process plus each bash and its waited-for subshells, per command.
 * Beside it, the same S-at-once count of bare bash loops (`( echo x ) </dev/null & wait $!`, one fork per command)
 * and of bash loops spawning /bin/true: how much the cost of a fork grows when several run at once on this machine.
 * --compare DIR: a checkout of another revision (its sources), measured in alternation with this one over
 * --rounds rounds (before/after in one run). Loads the TypeScript sources through tsx.
 *   node scripts/bench/shell-protocol.mjs [--shells 1] [--commands 500] [--rounds 1] [--compare DIR]
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { tsImport } from "tsx/esm/api";
import { procCpu } from "./proc_cpu.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    shells: { type: "string", default: "1" },
    commands: { type: "string", default: "500" },
    rounds: { type: "string", default: "1" },
    compare: { type: "string" },
  },
});
const shells = Number(values.shells);
const n = Number(values.commands);
const rounds = Number(values.rounds);
for (const [flag, v] of [
  ["--shells", shells],
  ["--commands", n],
  ["--rounds", rounds],
]) {
  if (!Number.isInteger(v) || v < 1) {
    console.error(`${flag}: expected a whole number`);
    process.exit(2);
  }
}
const MODULE = join("tools", "environments", "shell", "host_process.ts");
const sources = [{ label: "this", root: ROOT }];
if (values.compare !== undefined) {
  const other = resolve(values.compare);
  if (!existsSync(join(other, MODULE))) {
    console.error(`--compare: ${other} holds no ${MODULE}`);
    process.exit(2);
  }
  sources.push({ label: "compare", root: other });
}
for (const s of sources) s.HostShell = (await tsImport(join(s.root, MODULE), import.meta.url)).HostShell;

/** Boots one host shell, runs N commands; returns the CPU (ms) of the bash and its waited-for subshells. */
async function protocolShell(HostShell) {
  const shell = await HostShell.start({ innerShell: "/bin/bash", cwd: "/tmp", env: { PATH: process.env.PATH } });
  if (!shell) throw new Error("the host shell did not start");
  const run = async () => {
    const r = await shell.run({ command: "echo x", cwd: "/tmp", cap: 10_000 });
    if (r.stdout !== "x\n") throw new Error(`unexpected output ${JSON.stringify(r)}`);
  };
  for (let i = 0; i < 20; i++) await run();
  const c0 = procCpu(shell.pid);
  for (let i = 0; i < n; i++) await run();
  const c1 = procCpu(shell.pid);
  shell.close();
  return c1.selfMs + c1.childrenMs - c0.selfMs - c0.childrenMs;
}

/** S bash loops at once, each running `body` N times; CPU per iteration from each bash's `times`. */
function loops(body) {
  const script = `for ((i = 0; i < ${n}; i++)); do ${body}; done; times`;
  const r = spawnSync(
    "bash",
    ["-c", Array.from({ length: shells }, () => `bash -c '${script}' &`).join(" ") + " wait; times"],
    { encoding: "utf8" },
  );
  const lines = r.stdout.trim().split("\n");
  const seconds = [
    ...lines
      .slice(-2)
      .join(" ")
      .matchAll(/(\d+)m([\d.]+)s/g),
  ].reduce((a, m) => a + Number(m[1]) * 60 + Number(m[2]), 0);
  return (seconds * 1000) / (n * shells);
}

const per = (ms) => (ms / (n * shells)).toFixed(3);
console.log(`${shells} shell(s) at once, ${n} 'echo x' each`);
for (let r = 0; r < rounds; r++) {
  for (const s of r % 2 ? [...sources].reverse() : sources) {
    const u0 = process.cpuUsage();
    const bashMs = (await Promise.all(Array.from({ length: shells }, () => protocolShell(s.HostShell)))).reduce(
      (a, b) => a + b,
      0,
    );
    const u1 = process.cpuUsage(u0);
    const nodeMs = (u1.user + u1.system) / 1000;
    console.log(
      `  ${s.label.padEnd(7)} protocol (HostShell): ${per(nodeMs + bashMs)} ms CPU per command (node ${per(nodeMs)}, bash ${per(bashMs)})`,
    );
  }
}
console.log(
  `  bare fork loop:                ${loops("( echo x >/dev/null ) </dev/null & wait $!").toFixed(3)} ms CPU per command`,
);
console.log(`  /bin/true spawn loop:          ${loops("/bin/true").toFixed(3)} ms CPU per spawn`);
