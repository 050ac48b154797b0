/**
 * Serves the browser example: bundles main.ts with esbuild (`segkit` is this repository's dist/, so
 * run `npm run build` first; `npm run example:browser` does) and serves it with index.html on
 * localhost, a secure context, which navigator.gpu needs.
 *
 * Run: npm run example:browser        then open the printed address in a browser with WebGPU.
 * The headless Chromium test (test/browser/) uses startExampleServer() from here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = fileURLToPath(new URL('.', import.meta.url));
const distIndex = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

/** main.ts bundled for the browser, with `segkit` taken from dist/. */
export async function bundleExample(): Promise<string> {
  if (!existsSync(distIndex)) throw new Error(`no ${distIndex}: run npm run build first`);
  const result = await build({
    entryPoints: [`${here}main.ts`],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    alias: { segkit: distIndex },
    // Node-only code paths of the backend (Dawn's loader, worker threads) never run in a page.
    external: ['node:*', 'webgpu'],
  });
  return result.outputFiles[0]!.text;
}

/** Serves the example on `port` (0: any free port) of localhost; resolves with its address. */
export async function startExampleServer(port = 0): Promise<{ url: string; server: Server }> {
  const script = await bundleExample();
  const html = readFileSync(`${here}index.html`, 'utf8');
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path === '/main.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else if (path === '/' || path === '/index.html') response.writeHead(200, { 'content-type': 'text/html' }).end(html);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://localhost:${(server.address() as AddressInfo).port}/`, server };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { url } = await startExampleServer(Number(process.env.PORT ?? 8080));
  console.log(`segkit browser example: ${url}  (Ctrl-C stops)`);
}
