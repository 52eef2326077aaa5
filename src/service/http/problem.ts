/**
 * Domain errors → HTTP, in one place. Every error leaves the service as an
 * `application/problem+json` body with title, status, detail and a stable `code`.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { StagecoachError, type ErrorCode, type ErrorContext } from '../../contract/errors.js';
import { MEDIA } from '../../contract/media.js';
import type { Problem } from '../../contract/problem.js';

const REASON: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable content',
  429: 'Too many requests',
  500: 'Internal server error',
  503: 'Service unavailable',
};

export class HttpProblem extends StagecoachError {
  override readonly name = 'HttpProblem';
  constructor(
    readonly status: number,
    code: ErrorCode,
    detail: string,
    readonly extra: { title?: string; errors?: Problem['errors']; headers?: Record<string, string> } = {},
    context: ErrorContext = {},
  ) {
    super(code, detail, { ...context, status });
  }

  toBody(instance?: string): Problem {
    const body: Problem = {
      title: this.extra.title ?? REASON[this.status] ?? 'Error',
      status: this.status,
      detail: this.message,
      code: this.code,
    };
    if (instance) body.instance = instance;
    if (this.extra.errors) body.errors = this.extra.errors;
    return body;
  }
}

export const badRequest = (code: ErrorCode, detail: string, errors?: Problem['errors']) => new HttpProblem(400, code, detail, { errors });
export const notFound = (what: string) => new HttpProblem(404, 'NOT_FOUND', `${what} was not found`);
export const conflict = (code: ErrorCode, detail: string) => new HttpProblem(409, code, detail);

export function sendProblem(reply: FastifyReply, problem: HttpProblem, instance?: string): FastifyReply {
  for (const [k, v] of Object.entries(problem.extra.headers ?? {})) reply.header(k, v);
  return reply.status(problem.status).type(MEDIA.problem).send(problem.toBody(instance));
}

/** Installs the error and not-found handlers that turn everything into problem bodies. */
export function installProblemHandlers(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => {
    sendProblem(reply, new HttpProblem(404, 'NOT_FOUND', `no resource at ${request.method} ${request.url.split('?')[0]}`), request.url);
  });
  app.setErrorHandler((error: FastifyError | HttpProblem | Error, request, reply) => {
    if (error instanceof HttpProblem) return sendProblem(reply, error, request.url);
    const fe = error as FastifyError;
    if (fe.validation) return sendProblem(reply, badRequest('INVALID_REQUEST', fe.message), request.url);
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return sendProblem(reply, new HttpProblem(413, 'PAYLOAD_TOO_LARGE', 'request body exceeds the size limit'), request.url);
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
      return sendProblem(
        reply,
        new HttpProblem(415, 'UNSUPPORTED_MEDIA_TYPE', `content type ${request.headers['content-type'] ?? '(none)'} is not accepted here`),
        request.url,
      );
    if (
      fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      (fe.statusCode === 400 && fe instanceof SyntaxError)
    ) {
      return sendProblem(reply, badRequest('INVALID_REQUEST', `request body is not valid JSON: ${fe.message}`), request.url);
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      return sendProblem(reply, new HttpProblem(fe.statusCode, 'INVALID_REQUEST', fe.message), request.url);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, new HttpProblem(500, 'INTERNAL_ERROR', 'the service failed unexpectedly; see the service log'), request.url);
  });
}
