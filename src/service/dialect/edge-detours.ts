/**
 * Dialect switches that answer a request before its route does, as something in front of a
 * platform would: a redirect of every GET and PUT to the same resource under another path
 * (`redirects=307|308`: a platform moved behind a gateway), and a 413 with a proxy's HTML page for
 * a staging upload over a size limit (`upload-limit=…`). Also the request side of `uuids=upper`:
 * a platform that writes UUIDs in upper case takes them back in upper case, so ids in the path,
 * the query and a JSON body are read without case.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { canonicalIds } from '../../contract/canonical-form.js';
import type { Dialect } from './switches.js';

/** Where a redirected request is sent: the same path below this prefix (fastify's rewriteUrl strips it). */
export const MOVED_PREFIX = '/_moved';
/** Marks a raw request that came in under MOVED_PREFIX (set by `movedUrl`, read by the onRequest hook). */
const MOVED = Symbol('stagecoach.moved');

/**
 * fastify's `rewriteUrl` for `redirects=…`: a request under MOVED_PREFIX is routed as the path
 * without it, and remembered as redirected once already.
 * @example movedUrl({ url: '/_moved/migration-assistance/migrations/current' }) // '/migration-assistance/migrations/current'
 */
export function movedUrl(req: IncomingMessage): string {
  const url = req.url ?? '/';
  if (!url.startsWith(`${MOVED_PREFIX}/`)) return url;
  (req as unknown as Record<symbol, boolean>)[MOVED] = true;
  return url.slice(MOVED_PREFIX.length);
}

/** The proxy's page for a body over its limit (nginx's, word for word). */
const TOO_LARGE_PAGE =
  '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

/** Reads a request's body to its end (a reply before it would leave the client writing into a closed request). */
const drained = (req: IncomingMessage) =>
  new Promise<void>((resolve) => {
    if (req.readableEnded) return resolve();
    req
      .on('end', resolve)
      .on('error', () => resolve())
      .on('close', resolve);
    req.resume();
  });

/**
 * The detour a request takes before its route, or undefined to let the route answer. Only for
 * the platform's own API: the test hooks under `/_admin` answer as they are.
 */
export async function detour(request: FastifyRequest, reply: FastifyReply, d: Dialect, staging: boolean): Promise<boolean> {
  if (request.url.startsWith('/_admin')) return false;
  if (d.uuids === 'upper') {
    const params = request.params as Record<string, unknown> | undefined;
    if (params) for (const [k, v] of Object.entries(params)) params[k] = canonicalIds(v);
    const query = request.query as Record<string, unknown> | undefined;
    if (query) for (const [k, v] of Object.entries(query)) query[k] = canonicalIds(v);
  }
  const moved = (request.raw as unknown as Record<symbol, boolean>)[MOVED] === true;
  if (d.redirects && !moved && (request.method === 'GET' || request.method === 'PUT')) {
    if (request.method === 'PUT') await drained(request.raw);
    reply.code(d.redirects).header('location', `${MOVED_PREFIX}${request.url}`).header('content-type', 'text/plain; charset=utf-8');
    reply.send(`moved to ${MOVED_PREFIX}${request.url}`);
    return true;
  }
  const length = Number(request.headers['content-length'] ?? Number.NaN);
  if (staging && d.uploadLimit !== undefined && length > d.uploadLimit) {
    await drained(request.raw);
    reply.code(413).header('content-type', 'text/html').send(TOO_LARGE_PAGE);
    return true;
  }
  return false;
}
