/**
 * A minimal MCP server over stdio in Python (newline-delimited JSON-RPC: initialize, tools/list, tools/call of
 * `where`), for tests that start a server inside the Docker test image (it has python3, not node). Its tool writes
 * `made_by_mcp.txt` in its working folder and answers where it runs.
 */
export const PY_MCP_SERVER = String.raw`
import json, os, sys
def send(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    method, i = m.get("method"), m["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "py-mcp", "version": "0.1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": i, "result": {"tools": [{"name": "where", "description": "Where the server runs.", "inputSchema": {"type": "object", "properties": {}}}]}})
    elif method == "tools/call":
        with open("made_by_mcp.txt", "w") as f:
            f.write("hello")
        send({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "cwd=%s container=%s uid=%d" % (os.getcwd(), os.path.exists("/.dockerenv"), os.getuid())}]}})
    else:
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "unknown method"}})
`;
