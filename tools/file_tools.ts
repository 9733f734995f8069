import { noEffects, registry } from "./registry.js";
import { READ_DEFAULT_LIMIT, READ_MAX_LIMIT, handleReadFile, readArgs } from "./file_read.js";
import { handleWriteFile, writeArgs, writeEffects } from "./file_write.js";
import { handlePatch, patchArgs, patchEffects } from "./file_patch.js";
import { handleSearchFiles, searchArgs } from "./file_search.js";

export { READ_DEFAULT_LIMIT, READ_MAX_LIMIT, handleReadFile } from "./file_read.js";
export { handleWriteFile } from "./file_write.js";
export { handlePatch } from "./file_patch.js";
export { handleSearchFiles, toPosixEre } from "./file_search.js";

// ---------------------------------------------------------------- registration

registry.register({
  name: "read_file",
  toolset: "file",
  emoji: "📖",
  schema: {
    name: "read_file",
    description:
      `Read a text file with line numbers (LINE|content). Reads up to ${READ_DEFAULT_LIMIT} lines by default ` +
      `(max ${READ_MAX_LIMIT}); use offset and limit for large files. Use this instead of cat/head/tail in the terminal. ` +
      "Binary files and images are refused. When the file does not exist, similar file names are suggested.",
  },
  args: readArgs,
  handler: handleReadFile,
  effects: noEffects,
  needsEnvironment: true,
});

registry.register({
  name: "write_file",
  toolset: "file",
  emoji: "✍️",
  schema: {
    name: "write_file",
    description:
      "Write content to a file, replacing it entirely; parent directories are created. Use this instead of echo/cat " +
      "redirection in the terminal. For small changes to an existing file prefer patch.",
  },
  args: writeArgs,
  handler: handleWriteFile,
  effects: writeEffects,
  needsEnvironment: true,
});

registry.register({
  name: "patch",
  toolset: "file",
  emoji: "🔧",
  schema: {
    name: "patch",
    description:
      "Targeted find-and-replace edits in files. Use this instead of sed/awk in terminal. Returns a unified diff.\n\n" +
      "REPLACE MODE (mode='replace', default): find a unique string and replace it. Exact text is tried first, then " +
      "looser matches (trimmed lines, collapsed whitespace, other indentation, \\n escapes, smart quotes, similar blocks); " +
      "new_string is written as given. REQUIRED PARAMETERS: mode, path, old_string, new_string.\n" +
      "PATCH MODE (mode='patch'): apply V4A multi-file patches for bulk changes (add, update, move, delete files; " +
      "all or nothing). REQUIRED PARAMETERS: mode, patch.",
  },
  args: patchArgs,
  handler: handlePatch,
  effects: patchEffects,
  needsEnvironment: true,
});

registry.register({
  name: "search_files",
  toolset: "file",
  emoji: "🔎",
  schema: {
    name: "search_files",
    description:
      "Search file contents with a regular expression (target=content, default; returns path, line number and line) " +
      "or find files by name glob (target=files, e.g. '*.py'; newest first; a plain word matches names ending in it). " +
      "Hidden files and folders and node_modules are skipped. Use this instead of grep/find in the terminal.",
  },
  args: searchArgs,
  handler: handleSearchFiles,
  effects: noEffects,
  needsEnvironment: true,
});
