/**
 * The sandbox's seccomp filter (given to bwrap with `--seccomp FD`): the kernel's key management calls (`add_key`,
 * `request_key`, `keyctl`) fail with EPERM, every other call is allowed. Keyrings belong to no namespace: a process
 * inherits its parent's session keyring and possesses every key in it (and in the keyrings linked there, such as its
 * user's keyring, which pam_keyinit links into each login's session keyring) whatever its uid or user namespace.
 * Without the filter a task reads the keys of the harness's session (`keyctl print`): a token `keyctl add … @s` put
 * there, a Kerberos KEYRING: cache, an AFS token. `request_key` would also run the host's /sbin/request-key as root
 * for a key the task names. Docker's default profile denies the same three calls for the same reason.
 *
 * A classic BPF program (struct sock_filter: u16 code, u8 jt, u8 jf, u32 k, in the machine's byte order) over
 * struct seccomp_data (nr at offset 0, arch at 4), for the machine's own ABI and its 32-bit one (x86_64 with x32
 * and i386; aarch64 with arm; riscv64). Elsewhere there is no filter (keyringFilter: undefined).
 */
import { endianness } from "node:os";

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const AND_K = 0x54;
const RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
/** x32 system calls are x86_64's with this bit set. */
const X32_SYSCALL_BIT = 0x40000000;

/** An ABI: its AUDIT_ARCH_* value and its numbers of add_key, request_key and keyctl. */
interface Abi {
  arch: number;
  calls: [number, number, number];
  /** x86_64: the x32 numbers too (the same with X32_SYSCALL_BIT). */
  x32?: boolean;
}

const ABIS: Record<string, Abi[]> = {
  x64: [
    { arch: 0xc000003e, calls: [248, 249, 250], x32: true },
    { arch: 0x40000003, calls: [286, 287, 288] },
  ],
  arm64: [
    { arch: 0xc00000b7, calls: [217, 218, 219] },
    { arch: 0x40000028, calls: [309, 310, 311] },
  ],
  riscv64: [{ arch: 0xc00000f3, calls: [217, 218, 219] }],
};

type Insn = [code: number, jt: number, jf: number, k: number];

/**
 * The filter for `processArch` (Node's `process.arch`), or undefined where it is not known. Per ABI: load the
 * arch; not this one: on to the next; else load the call's number (x32's bit cleared), EPERM for each key call,
 * allow the rest. An unknown arch is allowed (none can run on these machines).
 */
export function keyringFilter(processArch = process.arch, order = endianness()): Buffer | undefined {
  const abis = ABIS[processArch];
  if (!abis) return undefined;
  const body: Insn[][] = abis.map((abi) => {
    const block: Insn[] = [[LD_W_ABS, 0, 0, 0]];
    if (abi.x32) block.push([AND_K, 0, 0, ~X32_SYSCALL_BIT >>> 0]);
    // Each jump's true branch goes to the EPERM at the program's end: filled in below, once offsets are known.
    for (const nr of abi.calls) block.push([JEQ_K, -1, 0, nr]);
    block.push([RET_K, 0, 0, SECCOMP_RET_ALLOW]);
    return block;
  });
  const program: Insn[] = [];
  for (const [i, block] of body.entries()) {
    // ld arch; jeq ABI → its block, else past it (to the next ABI's check, or the final allow).
    program.push([LD_W_ABS, 0, 0, 4], [JEQ_K, 0, block.length, abis[i]!.arch], ...block);
  }
  program.push([RET_K, 0, 0, SECCOMP_RET_ALLOW], [RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM]);
  const deny = program.length - 1;
  const out = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], at) => {
    const jump = jt === -1 ? deny - at - 1 : jt;
    if (jump > 255 || jf > 255) throw new Error("seccomp filter: jump too long");
    const le = order === "LE";
    if (le) out.writeUInt16LE(code, at * 8);
    else out.writeUInt16BE(code, at * 8);
    out.writeUInt8(jump, at * 8 + 2);
    out.writeUInt8(jf, at * 8 + 3);
    if (le) out.writeUInt32LE(k >>> 0, at * 8 + 4);
    else out.writeUInt32BE(k >>> 0, at * 8 + 4);
  });
  return out;
}
