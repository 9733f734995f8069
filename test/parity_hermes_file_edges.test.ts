/**
 * Edge cases of the file tools against the original's results (NousResearch/hermes-agent at upstream cb51baec:
 * tools/file_tools.py handlers `_handle_read_file`, `_handle_write_file`, `_handle_patch`, `_handle_search_files`
 * (file_tools.py:1034-1061) run with TERMINAL_ENV=local in a temporary folder holding `files`, file i given
 * mtime 1700000000 + 10*i, one process per case, ripgrep 13 on the PATH), as test/hermes_file_tools.test.ts
 * replays its fixture. Arguments the original's handlers default (`args.get("path", "")`, `args.get("content",
 * "")`, `args.get("pattern", "")`) are defaulted here too instead of refused. Steps marked `documented` carry the
 * write failure in the README's wording (the shell's "/usr/bin/bash: line 3: " prefix and final newline left out).
 */
import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import "../tools/file_tools.js";
import { createToolPipeline } from "../tools/pipeline.js";
import { localTask, type LocalTaskFixture } from "./helpers/local_ctx.js";

type Content = string | { hex: string } | null;
interface Case {
  name: string;
  files: Record<string, Content>;
  steps: { tool: string; args: Record<string, unknown>; result: string; documented?: boolean }[];
  files_after: Record<string, Content>;
}

const CASES: Case[] = [
  {
    name: "read: offset 0 and a negative limit are brought into range",
    files: {
      "a.txt": "l1\nl2\nl3\n",
    },
    steps: [
      {
        tool: "read_file",
        args: {
          path: "a.txt",
          offset: 0,
          limit: -3,
        },
        result:
          '{"content": "     1|l1\\n     2|", "total_lines": 3, "file_size": 9, "truncated": true, "hint": "Use offset=2 to continue reading (showing 1-1 of 3 lines)", "is_binary": false, "is_image": false}',
      },
    ],
    files_after: {
      "a.txt": "l1\nl2\nl3\n",
    },
  },
  {
    name: "read: limit 0",
    files: {
      "a.txt": "l1\nl2\nl3\n",
    },
    steps: [
      {
        tool: "read_file",
        args: {
          path: "a.txt",
          offset: 2,
          limit: 0,
        },
        result:
          '{"content": "     2|l2\\n     3|", "total_lines": 3, "file_size": 9, "truncated": true, "hint": "Use offset=3 to continue reading (showing 2-2 of 3 lines)", "is_binary": false, "is_image": false}',
      },
    ],
    files_after: {
      "a.txt": "l1\nl2\nl3\n",
    },
  },
  {
    name: "read: empty path",
    files: {
      "a.txt": "x\n",
    },
    steps: [
      {
        tool: "read_file",
        args: {
          path: "",
        },
        result:
          '{"content": "", "total_lines": 0, "file_size": 0, "truncated": false, "is_binary": false, "is_image": false, "error": "File not found: ", "similar_files": ["./a.txt"]}',
      },
    ],
    files_after: {
      "a.txt": "x\n",
    },
  },
  {
    name: "read: no path",
    files: {
      "a.txt": "x\n",
    },
    steps: [
      {
        tool: "read_file",
        args: {},
        result:
          '{"content": "", "total_lines": 0, "file_size": 0, "truncated": false, "is_binary": false, "is_image": false, "error": "File not found: ", "similar_files": ["./a.txt"]}',
      },
    ],
    files_after: {
      "a.txt": "x\n",
    },
  },
  {
    name: "read: device path",
    files: {},
    steps: [
      {
        tool: "read_file",
        args: {
          path: "/dev/zero",
        },
        result:
          '{"error": "Cannot read \'/dev/zero\': this is a device file that would block or produce infinite output."}',
      },
    ],
    files_after: {},
  },
  {
    name: "read: offset as a string",
    files: {
      "a.txt": "l1\nl2\nl3\n",
    },
    steps: [
      {
        tool: "read_file",
        args: {
          path: "a.txt",
          offset: "2",
          limit: "1",
        },
        result:
          '{"content": "     2|l2\\n     3|", "total_lines": 3, "file_size": 9, "truncated": true, "hint": "Use offset=3 to continue reading (showing 2-2 of 3 lines)", "is_binary": false, "is_image": false}',
      },
    ],
    files_after: {
      "a.txt": "l1\nl2\nl3\n",
    },
  },
  {
    name: "write: empty content",
    files: {},
    steps: [
      {
        tool: "write_file",
        args: {
          path: "e.txt",
          content: "",
        },
        result: '{"bytes_written": 0, "dirs_created": false}',
      },
    ],
    files_after: {
      "e.txt": "",
    },
  },
  {
    name: "write: no content",
    files: {},
    steps: [
      {
        tool: "write_file",
        args: {
          path: "e.txt",
        },
        result: '{"bytes_written": 0, "dirs_created": false}',
      },
    ],
    files_after: {
      "e.txt": "",
    },
  },
  {
    name: "write: no path",
    files: {},
    steps: [
      {
        tool: "write_file",
        args: {
          content: "x",
        },
        result:
          '{"bytes_written": 0, "dirs_created": false, "error": "Failed to write file: : No such file or directory"}',
        documented: true,
      },
    ],
    files_after: {},
  },
  {
    name: "write: empty path",
    files: {},
    steps: [
      {
        tool: "write_file",
        args: {
          path: "",
          content: "x",
        },
        result:
          '{"bytes_written": 0, "dirs_created": false, "error": "Failed to write file: : No such file or directory"}',
        documented: true,
      },
    ],
    files_after: {},
  },
  {
    name: "patch: new_string missing",
    files: {
      "a.txt": "hello\n",
    },
    steps: [
      {
        tool: "patch",
        args: {
          path: "a.txt",
          old_string: "hello",
        },
        result: '{"error": "old_string and new_string required"}',
      },
    ],
    files_after: {
      "a.txt": "hello\n",
    },
  },
  {
    name: "patch: delete with an empty new_string",
    files: {
      "a.txt": "hello world\n",
    },
    steps: [
      {
        tool: "patch",
        args: {
          path: "a.txt",
          old_string: " world",
          new_string: "",
        },
        result:
          '{"success": true, "diff": "--- a/a.txt\\n+++ b/a.txt\\n@@ -1 +1 @@\\n-hello world\\n+hello\\n", "files_modified": ["a.txt"], "lint": {"status": "skipped", "message": "No linter for .txt files"}}',
      },
    ],
    files_after: {
      "a.txt": "hello\n",
    },
  },
  {
    name: "patch: replace_all with no match",
    files: {
      "a.txt": "hello\n",
    },
    steps: [
      {
        tool: "patch",
        args: {
          path: "a.txt",
          old_string: "zzz",
          new_string: "y",
          replace_all: true,
        },
        result:
          '{"success": false, "error": "Could not find a match for old_string in the file", "_hint": "old_string not found. Use read_file to verify the current content, or search_files to locate the text."}',
      },
    ],
    files_after: {
      "a.txt": "hello\n",
    },
  },
  {
    name: "patch: V4A add over an existing file",
    files: {
      "a.txt": "hello\n",
    },
    steps: [
      {
        tool: "patch",
        args: {
          mode: "patch",
          patch: "*** Begin Patch\n*** Add File: a.txt\n+new\n*** End Patch",
        },
        result:
          '{"success": true, "diff": "--- /dev/null\\n+++ b/a.txt\\n+new", "files_created": ["a.txt"], "lint": {"a.txt": {"status": "skipped", "message": "No linter for .txt files"}}}',
      },
    ],
    files_after: {
      "a.txt": "new",
    },
  },
  {
    name: "patch: V4A update of a missing file",
    files: {},
    steps: [
      {
        tool: "patch",
        args: {
          mode: "patch",
          patch: "*** Begin Patch\n*** Update File: nope.txt\n@@\n-a\n+b\n*** End Patch",
        },
        result:
          '{"success": false, "error": "Patch validation failed (no files were modified):\\n  • nope.txt: File not found: nope.txt"}',
      },
    ],
    files_after: {},
  },
  {
    name: "patch: a folder",
    files: {
      d: null,
    },
    steps: [
      {
        tool: "patch",
        args: {
          path: "d",
          old_string: "a",
          new_string: "b",
        },
        result: '{"success": false, "error": "Failed to read file: d"}',
      },
    ],
    files_after: {},
  },
  {
    name: "patch: a binary file",
    files: {
      "b.bin": {
        hex: "00010203ff",
      },
    },
    steps: [
      {
        tool: "patch",
        args: {
          path: "b.bin",
          old_string: "a",
          new_string: "b",
        },
        result:
          '{"success": false, "error": "Could not find a match for old_string in the file", "_hint": "old_string not found. Use read_file to verify the current content, or search_files to locate the text."}',
      },
    ],
    files_after: {
      "b.bin": {
        hex: "00010203ff",
      },
    },
  },
  {
    name: "write then patch a json file (lint)",
    files: {},
    steps: [
      {
        tool: "write_file",
        args: {
          path: "c.json",
          content: '{"a": 1}\n',
        },
        result: '{"bytes_written": 9, "dirs_created": false}',
      },
      {
        tool: "patch",
        args: {
          path: "c.json",
          old_string: "1}",
          new_string: "1,}",
        },
        result:
          '{"success": true, "diff": "--- a/c.json\\n+++ b/c.json\\n@@ -1 +1 @@\\n-{\\"a\\": 1}\\n+{\\"a\\": 1,}\\n", "files_modified": ["c.json"], "lint": {"status": "skipped", "message": "No linter for .json files"}}',
      },
    ],
    files_after: {
      "c.json": '{"a": 1,}\n',
    },
  },
  {
    name: "search: target aliases",
    files: {
      "a.txt": "needle\n",
    },
    steps: [
      {
        tool: "search_files",
        args: {
          pattern: "needle",
          target: "grep",
        },
        result: '{"total_count": 1, "matches": [{"path": "./a.txt", "line": 1, "content": "needle"}]}',
      },
      {
        tool: "search_files",
        args: {
          pattern: "*.txt",
          target: "find",
        },
        result: '{"total_count": 1, "files": ["./a.txt"]}',
      },
    ],
    files_after: {
      "a.txt": "needle\n",
    },
  },
  {
    name: "search: unknown target",
    files: {
      "a.txt": "needle\n",
    },
    steps: [
      {
        tool: "search_files",
        args: {
          pattern: "needle",
          target: "everything",
        },
        result: '{"total_count": 1, "matches": [{"path": "./a.txt", "line": 1, "content": "needle"}]}',
      },
    ],
    files_after: {
      "a.txt": "needle\n",
    },
  },
  {
    name: "search: unknown output_mode",
    files: {
      "a.txt": "needle\n",
    },
    steps: [
      {
        tool: "search_files",
        args: {
          pattern: "needle",
          output_mode: "lines",
        },
        result: '{"total_count": 1, "matches": [{"path": "./a.txt", "line": 1, "content": "needle"}]}',
      },
    ],
    files_after: {
      "a.txt": "needle\n",
    },
  },
  {
    name: "search: empty pattern",
    files: {
      "a.txt": "needle\n",
    },
    steps: [
      {
        tool: "search_files",
        args: {
          pattern: "",
        },
        result: '{"total_count": 1, "matches": [{"path": "./a.txt", "line": 1, "content": "needle"}]}',
      },
    ],
    files_after: {
      "a.txt": "needle\n",
    },
  },
  {
    name: "search: limit 0 and a negative offset",
    files: {
      "a.txt": "needle\nneedle\n",
    },
    steps: [
      {
        tool: "search_files",
        args: {
          pattern: "needle",
          limit: 0,
          offset: -2,
        },
        result: '{"total_count": 1, "matches": [{"path": "./a.txt", "line": 1, "content": "needle"}]}',
      },
    ],
    files_after: {
      "a.txt": "needle\nneedle\n",
    },
  },
  {
    name: "search: empty pattern, files",
    files: {
      "a.txt": "needle\n",
      "b/c.py": "x\n",
    },
    steps: [
      {
        tool: "search_files",
        args: {
          pattern: "",
          target: "files",
        },
        result: '{"total_count": 2, "files": ["./b/c.py", "./a.txt"]}',
      },
    ],
    files_after: {
      "a.txt": "needle\n",
      "b/c.py": "x\n",
    },
  },
  {
    name: "search: no pattern",
    files: {
      "a.txt": "needle\n",
    },
    steps: [
      {
        tool: "search_files",
        args: {},
        result: '{"total_count": 1, "matches": [{"path": "./a.txt", "line": 1, "content": "needle"}]}',
      },
    ],
    files_after: {
      "a.txt": "needle\n",
    },
  },
  {
    name: "write: a path with a NUL-free odd name",
    files: {},
    steps: [
      {
        tool: "write_file",
        args: {
          path: "sp ace/é.txt",
          content: "é\n",
        },
        result: '{"bytes_written": 3, "dirs_created": true}',
      },
    ],
    files_after: {
      "sp ace/é.txt": "é\n",
    },
  },
];

const bytes = (c: string | { hex: string }) =>
  typeof c === "string" ? Buffer.from(c, "utf8") : Buffer.from(c.hex, "hex");
const normalized = (text: string) => {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
};

function filesUnder(root: string, dir = root): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) Object.assign(out, filesUnder(root, full));
    else if (!full.includes("__pycache__")) out[relative(root, full)] = readFileSync(full).toString("hex");
  }
  return out;
}

let task: LocalTaskFixture | undefined;
afterEach(async () => {
  await task?.dispose();
  task = undefined;
});

describe("file tool edge cases as the original's", () => {
  for (const c of CASES) {
    it(c.name, async () => {
      task = localTask();
      mkdirSync(task.taskDir, { recursive: true });
      Object.entries(c.files).forEach(([path, content], i) => {
        const full = join(task!.taskDir, path);
        if (content === null) return void mkdirSync(full, { recursive: true });
        mkdirSync(dirname(full), { recursive: true });
        writeFileSync(full, bytes(content));
        utimesSync(full, 1_700_000_000 + 10 * i, 1_700_000_000 + 10 * i);
      });
      await task.env();
      const pipeline = createToolPipeline();
      for (const step of c.steps) {
        const text = await pipeline.call(step.tool, step.args, task.ctx);
        expect(normalized(text), `${step.tool} ${JSON.stringify(step.args)}`).toBe(normalized(step.result));
      }
      const after = Object.fromEntries(
        Object.entries(c.files_after).map(([p, v]) => [p, bytes(v as string | { hex: string }).toString("hex")]),
      );
      expect(filesUnder(task.taskDir)).toEqual(after);
    });
  }
});
