/** Data: the names a Hermes allowlist uses for the classes (allowlist.ts reads them). */

/**
 * Hermes' pattern keys (its description strings, which its session approvals and `command_allowlist`
 * store) for each class here, so a Hermes allowlist entry approves the same class.
 */
export const HERMES_KEYS: Readonly<Record<string, readonly string[]>> = {
  delete_system_path: ["delete in root path"],
  recursive_delete: ["recursive delete", "recursive delete (long flag)"],
  world_writable: ["world-writable permissions", "recursive world-writable (long flag)"],
  chmod_chown_system: ["recursive chown to root", "recursive chown to root (long flag)"],
  format_filesystem: ["format filesystem"],
  disk_write: ["disk copy", "write to block device"],
  sql_drop: ["SQL DROP"],
  sql_delete_without_where: ["SQL DELETE without WHERE"],
  sql_truncate: ["SQL TRUNCATE"],
  system_config_write: ["overwrite system config"],
  stop_service: ["stop/disable system service"],
  kill_all_processes: ["kill all processes"],
  pkill_force: ["force kill processes"],
  fork_bomb: ["fork bomb"],
  shell_input: ["shell command via -c flag"],
  inline_code_unanalysable: ["script execution via -e/-c flag"],
  remote_code_exec: ["pipe remote content to shell"],
  xargs_rm: ["xargs with rm"],
  find_exec_rm: ["find -exec rm"],
  find_delete: ["find -delete"],
};
