// Interop check of harness mcp with the official TypeScript SDK client
// (@modelcontextprotocol/sdk), over stdio and Streamable HTTP, against the
// simulated campus: list (annotations), a read with campus data (_meta),
// a write refused without elicitation and approved with it, list_changed
// after harness modes in another process. Run from a folder where the SDK
// is installed (npm install @modelcontextprotocol/sdk):
//   node harness-mcp.mjs bin/harness "$(mktemp -d)"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { spawn, execFileSync } from "node:child_process";

const [bin, home] = process.argv.slice(2);
if (!bin || !home) { console.error("usage: node harness-mcp.mjs HARNESS_BIN EMPTY_HOME_DIR"); process.exit(2); }
const check = (ok, what) => { if (!ok) { console.error("FAIL:", what); process.exit(1); } };
async function drive(name, transport, elicit) {
  const c = new Client({ name: "ts-interop", version: "1" }, { capabilities: elicit ? { elicitation: {} } : {} });
  let changed = 0;
  c.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
  if (elicit) c.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: {} }));
  await c.connect(transport);
  const list = await c.listTools();
  const cancel = list.tools.find(t => t.name === "shuttle__cancelBooking");
  check(cancel && cancel.annotations.destructiveHint === true, name + ": cancelBooking is destructive");
  console.log(name, "tools", list.tools.length, "cancelBooking", JSON.stringify(cancel.annotations));
  const dep = await c.callTool({ name: "shuttle__departures", arguments: { routeId: 7 } });
  const d = JSON.parse(dep.content[0].text).data.departures[0];
  check(d && d.state === "bookable", name + ": a bookable simulated-campus departure");
  check(dep._meta && dep._meta["pku-harness/untrusted"] === false, name + ": untrusted in _meta");
  console.log(name, "departures", d.time, d.state, "_meta", JSON.stringify(dep._meta));
  const args = { routeId: 7, date: d.time.slice(0, 10), timeId: d.timeId };
  const book = await c.callTool({ name: "shuttle__book", arguments: args });
  check(elicit ? !book.isError : (book.isError && book.content[0].text.includes("harness modes shuttle write auto")),
    name + (elicit ? ": a booking approved through elicitation" : ": a booking refused, naming harness modes"));
  console.log(name, "book", book.isError ? "error: " + book.content[0].text.slice(0, 160) : "ok " + book.content[0].text.slice(0, 100));
  execFileSync(bin, ["--home", home, "modes", "classrooms", "read", "off"]);
  await new Promise(r => setTimeout(r, 1500));
  const after = await c.listTools();
  check(changed >= 1 && after.tools.length === list.tools.length - 1, name + ": list_changed after harness modes");
  console.log(name, "list_changed", changed, "tools now", after.tools.length);
  execFileSync(bin, ["--home", home, "modes", "classrooms", "read", "default"]);
  await new Promise(r => setTimeout(r, 1000));
  await c.close();
}
await drive("stdio(no elicitation)", new StdioClientTransport({ command: bin, args: ["--home", home, "mcp", "--campus"] }), false);
const srv = spawn(bin, ["--home", home, "mcp", "--http", "127.0.0.1:0", "--campus"]);
const url = await new Promise(res => srv.stderr.on("data", b => { const m = /http:\/\/\S+\/mcp/.exec(String(b)); if (m) res(m[0]); }));
await drive("http(elicitation)", new StreamableHTTPClientTransport(new URL(url)), true);
srv.kill("SIGTERM");
console.log("ok");
