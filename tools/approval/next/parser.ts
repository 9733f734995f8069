/**
 * The one bash parser: tree-sitter with the tree-sitter-bash grammar, both from npm (the grammar's
 * wasm ships in its package, so nothing is built or fetched at install). Loaded once per process by a
 * top-level await, so parsing is synchronous for callers.
 */
import { createRequire } from "node:module";
import { Language, Parser, type Node } from "web-tree-sitter";

export type { Node as SyntaxNode } from "web-tree-sitter";

const require = createRequire(import.meta.url);

// Both wasm files are found through the packages, not beside this module: the build bundles this code.
await Parser.init({ locateFile: (name: string) => require.resolve(`web-tree-sitter/${name}`) });
const bash = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
const parser = new Parser().setLanguage(bash);

/** `{rm,-r,/etc}` as a command: bash expands it into words; the grammar would read `{` as a group. */
const BRACE_COMMAND = /(^|[;&|(]\s*|\n\s*)\{([^{}\s$]*,[^{}\s]*)\}(?=[\s;&|)]|$)/g;

/**
 * Parses `source` and hands the root to `use`; the tree is freed afterwards (it lives in wasm memory),
 * so nodes must not escape `use`.
 */
export function withParsedBash<T>(source: string, use: (root: Node) => T): T {
  const braced = source.replace(BRACE_COMMAND, (_, before: string, body: string) => before + body.split(",").join(" "));
  const tree = parser.parse(braced);
  if (!tree) throw new Error("tree-sitter returned no tree");
  try {
    return use(tree.rootNode);
  } finally {
    tree.delete();
  }
}
