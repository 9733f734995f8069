/** Shared by the hostile2_* tests: trees an agent leaves where the verify's put must remove them. */
import type { ToolCallSpec } from "./fake_openai.js";

const term = (command: string): ToolCallSpec => ({ name: "terminal", arguments: { command } });

/**
 * What the verify's put must remove, left by the agent with a read-only folder inside (so a plain `rm -rf` fails): a
 * folder where the verify file goes, a `__pycache__` holding a .pyc of it, a package folder of its name.
 */
export const RO_TREES: Record<string, ToolCallSpec[]> = {
  rofile: [term("mkdir -p checks/check.sh/sub && touch checks/check.sh/sub/x && chmod 555 checks/check.sh/sub")],
  ropyc: [
    term(
      "mkdir -p checks/__pycache__ && touch checks/__init__.py checks/__pycache__/check.cpython-311.pyc && chmod 555 checks/__pycache__",
    ),
  ],
  ropkg: [term("mkdir -p checks/check/sub && touch checks/check/sub/x && chmod 555 checks/check/sub")],
};
/** The rows of RO_TREES: the verify file is checks/check.sh for rofile, checks/check.py for the others. */
export const RO_ROWS = [
  { id: "rofile", verify: "sh checks/check.sh" },
  { id: "ropyc", verify: "python3 checks/check.py" },
  { id: "ropkg", verify: "python3 checks/check.py" },
];
