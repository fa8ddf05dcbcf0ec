// A remote plugin written with the official TypeScript MCP SDK: a canteen
// with a read-only menu and an order tool, over Streamable HTTP on loopback,
// behind a bearer token. It prints its URL on the first line of stdout and
// serves until killed. Every request's Authorization header must be
// "Bearer $TOKEN".
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod/v4';

const token = process.env.TOKEN || '';
const orders = [];

function newServer() {
  const server = new McpServer({ name: 'TS Canteen', version: '2.0.0' });
  server.registerTool('menu', {
    title: 'Menu',
    description: "Today's dishes.",
    inputSchema: { day: z.string().optional().describe('A weekday') },
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async ({ day }) => {
    const data = { day: day || 'today', dishes: ['Beef noodles', 'Mapo tofu'] };
    return { structuredContent: data, content: [{ type: 'text', text: JSON.stringify(data) }] };
  });
  server.registerTool('place.order', {
    description: 'Orders one dish.',
    inputSchema: { dish: z.string() },
  }, async ({ dish }) => {
    orders.push(dish);
    return { content: [{ type: 'text', text: JSON.stringify({ ordered: dish, count: orders.length }) }] };
  });
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  if (req.url === '/orders') {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(orders));
    return;
  }
  if (token && req.headers['authorization'] !== `Bearer ${token}`) {
    res.statusCode = 401;
    res.end('unauthorized');
    return;
  }
  // Stateless: a new server and transport for each request.
  const server = newServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => { transport.close(); server.close(); });
  let body = '';
  req.on('data', (c) => { body += c; if (body.length > 1 << 20) req.destroy(); });
  req.on('end', async () => {
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
    } catch (e) {
      if (!res.headersSent) { res.statusCode = 400; res.end(String(e)); }
    }
  });
});
httpServer.listen(0, '127.0.0.1', () => {
  const { port } = httpServer.address();
  console.log(`http://127.0.0.1:${port}/mcp`);
});
