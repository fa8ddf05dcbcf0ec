// A client written with the official TypeScript MCP SDK that drives
// `harness mcp`, over stdio (MODE=stdio: it starts $HARNESS_BIN mcp --campus)
// or Streamable HTTP (MODE=http: it connects to $URL). It prints one JSON
// line per check on stdout, {"check": NAME, ...facts}, and exits 1 on the
// first failed check. Between the checks before and after an install it
// prints {"check":"ready"} and waits for a line on stdin: the test installs
// a document then, and the client waits for tools/list_changed.
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const mode = process.env.MODE || 'stdio';
const say = (o) => console.log(JSON.stringify(o));
const fail = (msg) => { say({ check: 'failed', error: msg }); process.exit(1); };
const stdinLines = readline.createInterface({ input: process.stdin });
const nextLine = () => new Promise((res) => stdinLines.once('line', res));
const text = (r) => (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');

function transport() {
  if (mode === 'http') {
    const opts = process.env.TOKEN ? { requestInit: { headers: { Authorization: `Bearer ${process.env.TOKEN}` } } } : {};
    return new StreamableHTTPClientTransport(new URL(process.env.URL), opts);
  }
  return new StdioClientTransport({
    command: process.env.HARNESS_BIN, args: ['mcp', '--campus'],
    env: { ...process.env, HARNESS_HOME: process.env.HARNESS_HOME }, stderr: 'inherit',
  });
}

// answers: what the elicitation handler says, in turn.
const answers = ['decline', 'accept'];
let asked = 0;
const client = new Client({ name: 'ts-interop', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked++;
  return { action: answers.shift() || 'decline', content: {} };
});
let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => { listChanged++; });

try {
  await client.connect(transport());
} catch (e) { fail(`connect: ${e}`); }
const caps = client.getServerCapabilities();
say({ check: 'initialize', server: client.getServerVersion()?.name, listChanged: !!caps?.tools?.listChanged });

const tools = (await client.listTools()).tools;
const names = tools.map((t) => t.name);
if (!names.includes('wallet__cardBalance')) fail(`tools/list lacks wallet__cardBalance: ${names}`);
const ann = (n) => tools.find((t) => t.name === n)?.annotations || null;
say({ check: 'list', count: names.length, book: ann('shuttle__book'), cancel: ann('shuttle__cancelBooking'), balance: ann('wallet__cardBalance') });

let r = await client.callTool({ name: 'wallet__cardBalance', arguments: {} });
if (r.isError) fail(`cardBalance: ${text(r)}`);
const env = JSON.parse(text(r));
say({ check: 'read', source: env.source, data: env.data, meta: r._meta || null });

// A write asks: declined first (refused), accepted the second time.
const departures = JSON.parse(text(await client.callTool({ name: 'shuttle__departures', arguments: { routeId: 7 } })));
const dep = (departures.data.departures || []).find((d) => d.state === 'bookable');
if (!dep) fail(`no bookable departure: ${JSON.stringify(departures.data).slice(0, 300)}`);
const bookArgs = { routeId: 7, date: dep.time.slice(0, 10), timeId: dep.timeId };
r = await client.callTool({ name: 'shuttle__book', arguments: bookArgs });
say({ check: 'write-declined', isError: !!r.isError, text: text(r).slice(0, 300), asked });
r = await client.callTool({ name: 'shuttle__book', arguments: bookArgs });
say({ check: 'write-accepted', isError: !!r.isError, text: text(r).slice(0, 300), asked });

say({ check: 'ready' });
await nextLine();
for (let i = 0; i < 100 && listChanged === 0; i++) await new Promise((res) => setTimeout(res, 100));
const after = (await client.listTools()).tools.map((t) => t.name);
say({ check: 'list-changed', notified: listChanged, tools: after.filter((n) => n.startsWith('hello-')) });
await client.close();

// A malformed line on stdio is answered, and the session goes on.
if (mode === 'stdio') {
  const child = spawn(process.env.HARNESS_BIN, ['mcp'], { env: { ...process.env }, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout });
  const got = [];
  lines.on('line', (l) => got.push(JSON.parse(l)));
  child.stdin.write('this is not json\n');
  child.stdin.write('{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}\n');
  child.stdin.end();
  await new Promise((res) => child.on('exit', res));
  say({ check: 'malformed', answers: got.map((m) => ({ id: m.id ?? null, code: m.error?.code ?? null, ok: !!m.result })) });
}
process.exit(0);
