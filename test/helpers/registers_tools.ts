/**
 * Whether a module's top level (not inside a function or class) calls `registry.register(...)`: the check
 * that keeps tools/builtin_tools.ts complete. It uses the TypeScript compiler, a dev dependency.
 */
import ts from "typescript";

export function moduleRegistersTools(source: string, fileName = "module.ts"): boolean {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false);
  const isRegisterCall = (node: ts.Node): boolean =>
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    node.expression.name.text === "register" &&
    ts.isIdentifier(node.expression.expression) &&
    node.expression.expression.text === "registry";
  // Walk statements and the expressions they hold, but never descend into function bodies or classes.
  const visit = (node: ts.Node): boolean => {
    if (ts.isFunctionLike(node) || ts.isClassLike(node)) return false;
    if (isRegisterCall(node)) return true;
    return ts.forEachChild(node, visit) ?? false;
  };
  return sf.statements.some((s) => visit(s));
}
